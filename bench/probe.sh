#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The probe section of make bench (probe in BENCH_TESTS), sourced by
# bench/guest.sh: ftvctl probe against each censor, BENCH_PROBE_RUNS
# times (10 by default). Each run is the censor's selftest, whole (its
# own namespaces, R between the ends with the censor on it, the verdict
# and the recommendation asserted, --apply and what it must bring):
#
#   police  test_pathprobe_police.sh  a policer per connection, and a
#                                     clean path first
#   freeze  test_pathprobe_freeze.sh  connections frozen after 16 KB
#   rst     test_pathprobe_rst.sh     RSTs injected after 40 segments,
#                                     and a clean path after
#   mtu     test_pathprobe_mtu.sh     a 1280-byte link, ICMP dropped and
#                                     not, and a clean path first
#   port    test_pathprobe_port.sh    SYNs to the port in use dropped,
#                                     and a clean path first
#   open    test_pathprobe_open.sh    connections whose first payload
#                                     from the client is not printable
#                                     blocked, and a clean path first
#
# BENCH_PROBE_CENSORS picks some. ftvctl is wrapped for the runs: each
# probe's JSON, wall time and the VM's busy CPU while it ran (both ends
# and R: the probe's cost at the responder is part of it, so this bounds
# it) go to LOGS. One sample per run: probe_CENSOR, ok 1 when the
# script passed every case; probes, the probe runs in it; seconds and
# bytes, the most of one probe (the limits are 30 s and 5 MB); cpu_s,
# the most busy CPU of one probe, in CPU-seconds.
#
# Needs from guest.sh: say, SAMPLES, LOGS and selftests/lib.sh.

PROBE_SCRIPTS=(
	police:test_pathprobe_police.sh
	freeze:test_pathprobe_freeze.sh
	rst:test_pathprobe_rst.sh
	mtu:test_pathprobe_mtu.sh
	port:test_pathprobe_port.sh
	open:test_pathprobe_open.sh
)

# probe_wrapper DIR : an ftvctl in DIR that records each probe it runs
# into DIR/probe-N.{json,cpu} and is the real one otherwise
probe_wrapper()
{
	cat >"$1/ftvctl" <<EOF
#!/bin/bash
# make bench's ftvctl: the real one, timing each probe.
real=$FTVCTL
dir=$1
[ "\${1:-}" = probe ] || exec "\$real" "\$@"
busy() { awk '/^cpu / { print \$2 + \$3 + \$4 + \$7 + \$8 + \$9 }' /proc/stat; }
n=\$(find "\$dir" -name '*.cpu' | wc -l)
b0=\$(busy) t0=\$EPOCHREALTIME
out=\$("\$real" "\$@")
rc=\$?
b1=\$(busy) t1=\$EPOCHREALTIME
printf '%s\n' "\$out"
printf '%s\n' "\$out" >"\$dir/probe-\$n.json"
awk -v b="\$((b1 - b0))" -v h="\$(getconf CLK_TCK)" -v a="\$t0" -v z="\$t1" \\
	'BEGIN { printf "%.3f %.3f\n", b / h, z - a }' >"\$dir/probe-\$n.cpu"
exit \$rc
EOF
	chmod +x "$1/ftvctl"
}

# probe_figures DIR : "probes seconds bytes cpu_s" of the probes in DIR:
# how many, and the most of each figure
probe_figures()
{
	"$PYTHON" - "$1" <<'EOF'
import glob, json, os, sys
d = sys.argv[1]
n, secs, nbytes, cpu = 0, 0.0, 0, 0.0
for path in sorted(glob.glob(os.path.join(d, "probe-*.cpu"))):
    n += 1
    with open(path) as f:
        c, _ = (float(x) for x in f.read().split())
    cpu = max(cpu, c)
    try:
        with open(path[:-4] + ".json") as f:
            r = json.load(f)
        secs = max(secs, r.get("seconds", 0))
        nbytes = max(nbytes, r.get("bytes", 0))
    except (OSError, ValueError):
        pass
print(n, secs, nbytes, cpu)
EOF
}

# probe_bench RUNS : each censor's selftest RUNS times
probe_bench()
{
	local runs=$1 entry censor script r dir rc figs
	local -a want

	read -r -a want <<<"${BENCH_PROBE_CENSORS:-police freeze rst mtu port open}"
	# The selftests count objects by the module's debug messages.
	echo 'module ftv +p' >/proc/dynamic_debug/control 2>/dev/null
	for ((r = 1; r <= runs; r++)); do
		for entry in "${PROBE_SCRIPTS[@]}"; do
			censor=${entry%%:*} script=${entry#*:}
			in_list "$censor" "${want[@]}" || continue
			dir=$LOGS/probe-$censor-r$r
			mkdir -p "$dir"
			probe_wrapper "$dir"
			FTVCTL=$dir/ftvctl bash "$FTV_ROOT/selftests/$script" \
				>"$dir/ktap.log" 2>&1
			rc=$?
			read -r -a figs <<<"$(probe_figures "$dir")"
			printf '{"repeat":%d,"config":"ftv","test":"probe_%s","ok":%d,"probes":%d,"seconds":%s,"bytes":%s,"cpu_s":%s}\n' \
				"$r" "$censor" "$((rc == 0))" "${figs[0]:-0}" \
				"${figs[1]:-0}" "${figs[2]:-0}" "${figs[3]:-0}" >>"$SAMPLES"
			say "probe $censor, run $r/$runs: $([ "$rc" = 0 ] && echo passed || echo "FAILED ($(grep -c '^not ok' "$dir/ktap.log") cases)")," \
				"${figs[0]:-0} probes, at most ${figs[1]:-?} s," \
				"${figs[2]:-?} bytes and ${figs[3]:-?} CPU-s each"
		done
	done
	echo 'module ftv -p' >/proc/dynamic_debug/control 2>/dev/null
}
