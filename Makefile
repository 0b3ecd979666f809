# SPDX-License-Identifier: GPL-2.0
#
# ftv top-level Makefile.
#
#   make [KDIR=...|KVER=...] [W=1] [C=1|2] [FTV_DEBUG=1]
#                                   build module/ftv.ko and tools/ftvctl/ftvctl
#                                   (KVER=7.3: against those headers, in the
#                                   chroot that has them)
#   make install [DESTDIR=...] [PREFIX=...]
#   make check [KVER="6.1 6.12"] [TEST_PROGS="test_ping.sh"]
#                                   selftests in a VM per kernel (default:
#                                   Debian's 6.1 and bookworm-backports' 6.12)
#   make check-debug [TEST_PROGS=...]
#                                   the same selftests on a debug kernel built
#                                   from linux-source-6.1 (KASAN, lockdep,
#                                   kmemleak, ...); any report fails it
#   make check-arm64 [TEST_PROGS=...]
#                                   the core selftests in an emulated arm64
#                                   VM (Debian's arm64 6.12, ftv.ko
#                                   cross-built in the trixie chroot)
#   make demo                       two namespaces talking through ftv, in a VM
#   make bench [BENCH_QUICK=1]      ftv beside veth, WireGuard and OpenVPN, in a
#                                   VM; table and chart in bench/results/
#   make build-all                  W=1 builds against every kernel's headers:
#                                   this machine's and the chroots' (trixie's
#                                   6.12, sid's 7.2, trixie-backports' 7.3,
#                                   made by scripts/chroot.sh); a warning
#                                   fails it
#   make check-style                checkpatch --strict, kernel-doc, shellcheck,
#                                   the call loop and function lengths
#   make ynl                        the kernel's netlink tools and schemas
#                                   (tools/net/ynl, Documentation/netlink)
#                                   from linux-source-6.12, in .cache/
#   make dist                       ftv-VERSION.tar.xz of HEAD, with the
#                                   VERSION file dkms and the build read
#   make clean
#
# FTV_NO_VM=1 makes check and demo run on this host's running kernel
# instead of booting a VM (for machines that can load modules).

# The running kernel's headers if installed, else the newest ones this
# machine has (not a chroot's, linked into /lib/modules: those want the
# chroot's compiler; KVER= builds for them).
ifeq ($(origin KDIR),undefined)
KDIR := $(shell d=/lib/modules/$$(uname -r)/build; \
	if [ -d "$$d" ]; then echo "$$d"; \
	else r=$$(scripts/kbuild.sh --host | sort -V | tail -n 1); \
	[ -n "$$r" ] && echo "/lib/modules/$$r/build"; fi)
endif

# PREFIX and DESTDIR go to the installs of tools/ftvctl and tools/ftv-quick
# (PREFIX defaults to /usr there); DESTDIR also becomes INSTALL_MOD_PATH for
# the module.
DESTDIR ?=

# W=, C=, V= and FTV_DEBUG= (module self-tests at load) go to kbuild.
# KVER=7.3 (a release or prefix; the first word of KVER) builds against
# those headers instead, in the chroot that has them if they are not this
# machine's (scripts/kbuild.sh; scripts/chroot.sh makes the chroots).
KBUILD_ARGS := M=$(CURDIR) $(if $(W),W=$(W)) $(if $(C),C=$(C)) \
	  $(if $(V),V=$(V)) $(if $(FTV_DEBUG),FTV_DEBUG=$(FTV_DEBUG))
ifneq ($(KVER),)
KBUILD := scripts/kbuild.sh $(firstword $(KVER)) $(KBUILD_ARGS)
else
KBUILD := $(MAKE) -C $(KDIR) $(KBUILD_ARGS)
endif

LINUX_SOURCE_TAR ?= /usr/src/linux-source-6.1.tar.xz
STYLE_DIR := .cache/linux-source-6.1
CHECKPATCH := $(STYLE_DIR)/scripts/checkpatch.pl
KERNEL_DOC ?= $(firstword $(wildcard /usr/src/linux-kbuild-6.1/scripts/kernel-doc) kernel-doc)
MODULE_SRCS = $(sort $(filter-out %.mod.c,$(shell find module -name '*.[ch]' 2>/dev/null)))
# compat.h is the one file allowed to test LINUX_VERSION_CODE: what differs
# between the kernels ftv supports is kept there. Its FTV_COMPAT_NEWLINK()
# defines a function, whose return checkpatch takes for a macro's flow
# control.
CHECKPATCH_COMPAT := module/compat.h
SHELL_SCRIPTS = $(wildcard scripts/*.sh selftests/*.sh bench/*.sh) .ci/run

.PHONY: all module tools clean install check check-debug check-arm64 demo bench check-style dist ynl build-all

all: module tools

module:
	@test -n "$(KVER)" || test -d "$(KDIR)" || { echo "No kernel headers" \
		"found (KDIR='$(KDIR)'); run scripts/deps.sh or pass KDIR=." >&2; exit 1; }
	$(KBUILD) modules

tools:
	$(MAKE) -C tools/ftvctl

# ftvctl, ftv-quick, their man pages, bash completion and the systemd unit
# ftv-quick@.service go under PREFIX (default /usr), below DESTDIR.
install: module tools
	$(KBUILD) $(if $(DESTDIR),INSTALL_MOD_PATH=$(DESTDIR)) modules_install
	$(MAKE) -C tools/ftvctl install $(if $(PREFIX),PREFIX=$(PREFIX)) DESTDIR=$(DESTDIR)
	$(MAKE) -C tools/ftv-quick install $(if $(PREFIX),PREFIX=$(PREFIX)) DESTDIR=$(DESTDIR)

# A release tarball has no .git: scripts/version.sh reads VERSION instead.
dist:
	@set -e; v=$$(scripts/version.sh); d=.cache/dist; \
	case $$v in *.dirty) echo "dist: uncommitted changes are left out of ftv-$$v" >&2;; esac; \
	rm -rf $$d; mkdir -p $$d/ftv-$$v; echo "$$v" >$$d/ftv-$$v/VERSION; \
	git archive --format=tar --prefix=ftv-$$v/ -o $$d/ftv-$$v.tar HEAD; \
	tar -rf $$d/ftv-$$v.tar -C $$d ftv-$$v/VERSION; \
	xz -f $$d/ftv-$$v.tar; mv $$d/ftv-$$v.tar.xz .; echo "ftv-$$v.tar.xz"

clean:
	if [ -d "$(KDIR)" ]; then $(MAKE) -C $(KDIR) M=$(CURDIR) clean; fi
	if [ -f tools/ftvctl/Makefile ]; then $(MAKE) -C tools/ftvctl clean; fi
	$(MAKE) -C selftests clean
	rm -rf .vm-out .cache/build .cache/ftvctl-check.log

# scripts/check.sh installs what is missing, builds for the test kernel,
# boots it and ends with "N passed, N failed".
check:
	+@MAKE="$(MAKE)" KVER="$(KVER)" FTV_KERNEL="$(FTV_KERNEL)" scripts/check.sh check

# The debug kernel is built once into .cache/debug-kernel/ (about 7
# minutes on two cores) and reused.
check-debug:
	+@MAKE="$(MAKE)" KVER="$(KVER)" FTV_KERNEL="$(FTV_KERNEL)" scripts/check.sh check-debug

# The core selftests on arm64, in an emulated arm64 VM (Debian trixie's
# arm64 6.12, ftv.ko cross-built): scripts/check-arm64.sh.
check-arm64:
	+@scripts/check-arm64.sh

demo:
	+@MAKE="$(MAKE)" KVER="$(KVER)" FTV_KERNEL="$(FTV_KERNEL)" scripts/check.sh demo

# bench/run.sh reads the BENCH_* variables (given here or in the
# environment); it measures and reports, and never fails on a number.
bench:
	+@MAKE="$(MAKE)" KVER="$(KVER)" FTV_KERNEL="$(FTV_KERNEL)" bench/run.sh

# checkpatch.pl comes from Debian's linux-source-6.1; only the three files
# it needs are unpacked, once.
$(CHECKPATCH): $(LINUX_SOURCE_TAR)
	mkdir -p .cache
	[ -f .cache/.gitignore ] || echo '*' >.cache/.gitignore
	tar -xf $(LINUX_SOURCE_TAR) -C .cache \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	touch $@

# The kernel's own netlink tooling, against which docs/netlink/ftv.yaml is
# checked (selftests/lib/ynl_check.py) and with which test_ynl.sh drives the
# module: ynl's CLI and generator and the genetlink schemas.
YNL_SOURCE_TAR ?= /usr/src/linux-source-6.12.tar.xz
YNL_DIR := .cache/linux-source-6.12
YNL_STAMP := $(YNL_DIR)/.ynl-stamp

ynl: $(YNL_STAMP)

$(YNL_STAMP): $(YNL_SOURCE_TAR)
	mkdir -p .cache
	[ -f .cache/.gitignore ] || echo '*' >.cache/.gitignore
	tar -xf $(YNL_SOURCE_TAR) -C .cache \
		linux-source-6.12/tools/net/ynl \
		linux-source-6.12/Documentation/netlink
	touch $@

build-all:
	scripts/build-all.sh

check-style: $(CHECKPATCH)
	@rc=0; \
	echo "== checkpatch --strict (module/)"; \
	$(CHECKPATCH) --strict --no-tree --quiet --show-types \
		-f $(filter-out $(CHECKPATCH_COMPAT),$(MODULE_SRCS)) || rc=1; \
	if [ -f $(CHECKPATCH_COMPAT) ]; then \
		$(CHECKPATCH) --strict --no-tree --quiet --show-types \
			--ignore LINUX_VERSION_CODE,MACRO_WITH_FLOW_CONTROL -f $(CHECKPATCH_COMPAT) || rc=1; \
	fi; \
	echo "== kernel-doc -none (module/)"; \
	out=$$($(KERNEL_DOC) -none $(MODULE_SRCS) 2>&1); \
	if [ -n "$$out" ]; then echo "$$out"; rc=1; fi; \
	echo "== shellcheck"; \
	shellcheck -x $(SHELL_SCRIPTS) || rc=1; \
	echo "== the call loop and function lengths (scripts/callgraph.py)"; \
	python3 scripts/callgraph.py module --quiet --max-loop 9 \
		--max-lines 60 --lines module tools || rc=1; \
	echo "== python syntax (selftests/lib/*.py)"; \
	python3 -c 'import ast, sys; [ast.parse(open(f).read(), f) for f in sys.argv[1:]]' \
		selftests/lib/*.py || rc=1; \
	if [ $$rc -eq 0 ]; then echo "style: clean"; else echo "style: problems above"; fi; \
	exit $$rc
