#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""docs/netlink/ftv.yaml against the kernel's own netlink tooling (host).

The spec is the source of truth; this proves that the rest agrees with it:

 1. it validates against the schema of the protocol it declares
    (Documentation/netlink/genetlink-legacy.yaml of Linux 6.12);
 2. ynl-gen-c accepts it and makes a uapi header and the kernel's
    declarations of it;
 3. module/uapi/linux/ftv.h holds every name of that header with the same
    value, and nothing the spec does not describe;
 4. every policy in module/netlink.c matches the spec's type and checks for
    each attribute, and rejects exactly the attributes the spec calls
    read-only;
 5. ftvctl's drop reason names are generated from the spec's one list
    (tools/ftvctl/drop-names.h is up to date), and its man page lists them.

Needs `make ynl` (tools/net/ynl and Documentation/netlink from Debian's
linux-source-6.12, in .cache/). Prints KTAP; exits non-zero on a failure.
"""

import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SPEC = os.path.join(ROOT, "docs/netlink/ftv.yaml")
UAPI = os.path.join(ROOT, "module/uapi/linux/ftv.h")
NETLINK_C = os.path.join(ROOT, "module/netlink.c")
YNL_SRC = os.environ.get("FTV_YNL_SRC",
                         os.path.join(ROOT, ".cache/linux-source-6.12"))
YNL = os.path.join(YNL_SRC, "tools/net/ynl")
SCHEMAS = os.path.join(YNL_SRC, "Documentation/netlink")

# Helper names the header adds for C users (masks of all flags); the
# spec's flags definitions imply them, ynl-gen-c writes them differently.
HEADER_ONLY = {"__FTV_DEVICE_F_ALL", "__FTV_PEER_F_ALL"}

results = []


def report(ok, name, why=""):
    results.append(ok)
    print(f"{'ok' if ok else 'not ok'} {len(results)} {name}")
    for line in (why or "").strip().splitlines()[:40]:
        print(f"# {line}")


def c_name(*parts):
    return "".join(parts).upper().replace("-", "_")


def load_spec():
    with open(SPEC, encoding="utf-8") as f:
        return yaml.safe_load(f)


def check_schema(spec):
    import jsonschema

    path = os.path.join(SCHEMAS, f"{spec['protocol']}.yaml")
    with open(path, encoding="utf-8") as f:
        schema = yaml.safe_load(f)
    try:
        jsonschema.validate(spec, schema)
    except jsonschema.ValidationError as e:
        report(False, f"spec validates against {os.path.basename(path)}",
               f"{'/'.join(map(str, e.absolute_path))}: {e.message}")
        return
    report(True, f"spec validates against {os.path.basename(path)}")


def run_gen(mode, *extra):
    with tempfile.TemporaryDirectory() as tmp:
        # ynl-gen-c finds the schema next to the spec's directory, as in
        # the kernel's Documentation/netlink/{specs/,}.
        os.makedirs(os.path.join(tmp, "specs"))
        spec = os.path.join(tmp, "specs/ftv.yaml")
        shutil.copy(SPEC, spec)
        for proto in ("genetlink", "genetlink-c", "genetlink-legacy"):
            shutil.copy(os.path.join(SCHEMAS, f"{proto}.yaml"), tmp)
        # ...and the tree's root by its MAINTAINERS file.
        open(os.path.join(tmp, "MAINTAINERS"), "w", encoding="utf-8").close()
        out = os.path.join(tmp, "out")
        cmd = [sys.executable, os.path.join(YNL, "ynl-gen-c.py"),
               "--mode", mode, "--spec", spec, *extra, "-o", out]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True,
                               check=False, timeout=120)
        except subprocess.TimeoutExpired:
            return 1, "ynl-gen-c did not finish in 120 s", ""
        text = ""
        if os.path.exists(out):
            with open(out, encoding="utf-8") as f:
                text = f.read()
        return p.returncode, p.stdout + p.stderr, text


def header_names(text):
    """Macro and enumerator names a header defines, in order."""
    names = []
    for m in re.finditer(r"^#define\s+(\w+)\s+\S", text, re.M):
        names.append(m.group(1))
    for body in re.findall(r"\benum\b[^{;]*\{(.*?)\}", text, re.S):
        body = re.sub(r"/\*.*?\*/", "", body, flags=re.S)
        for item in body.split(","):
            m = re.match(r"\s*(\w+)", item)
            if m:
                names.append(m.group(1))
    return names


def header_values(include_dir, names):
    """NAME -> value (int or string) as a C compiler sees them."""
    src = ["#include <stdio.h>", "#include <linux/ftv.h>",
           "#define P(x) _Generic((x), char *: printf(\"%s s:%s\\n\", #x, "
           "(char *)(x)), default: printf(\"%s %lld\\n\", #x, "
           "(long long)(x)))",
           "int main(void) {"]
    src += [f"\tP({n});" for n in names]
    src += ["\treturn 0;", "}"]
    with tempfile.TemporaryDirectory() as tmp:
        c = os.path.join(tmp, "v.c")
        exe = os.path.join(tmp, "v")
        with open(c, "w", encoding="utf-8") as f:
            f.write("\n".join(src) + "\n")
        p = subprocess.run(["cc", "-std=gnu11", "-w", "-I", include_dir,
                            "-o", exe, c], capture_output=True, text=True,
                           check=False)
        if p.returncode:
            return None, p.stderr
        out = subprocess.run([exe], capture_output=True, text=True,
                             check=True).stdout
    vals = {}
    for line in out.splitlines():
        k, v = line.split(" ", 1)
        vals[k] = v[2:] if v.startswith("s:") else int(v)
    return vals, ""


def check_header(gen_text):
    gen_names = [n for n in header_names(gen_text)
                 if not n.startswith("_UAPI_") and n != "_LINUX_FTV_H"]
    with open(UAPI, encoding="utf-8") as f:
        ours_text = f.read()
    ours_names = [n for n in header_names(ours_text)
                  if not n.startswith("_UAPI_")]
    with tempfile.TemporaryDirectory() as tmp:
        os.makedirs(os.path.join(tmp, "linux"))
        with open(os.path.join(tmp, "linux/ftv.h"), "w",
                  encoding="utf-8") as f:
            f.write(gen_text)
        gen, err = header_values(tmp, gen_names)
        if gen is None:
            report(False, "uapi header matches the spec", err)
            return {}
    ours, err = header_values(os.path.dirname(os.path.dirname(UAPI)),
                              ours_names)
    if ours is None:
        report(False, "uapi header matches the spec", err)
        return {}
    why = []
    for n in gen_names:
        if n not in ours:
            why.append(f"{n} (= {gen[n]}) is missing from ftv.h")
        elif ours[n] != gen[n]:
            why.append(f"{n} is {ours[n]} in ftv.h, {gen[n]} in the spec")
    for n in ours_names:
        if n not in gen and n not in HEADER_ONLY:
            why.append(f"{n} is in ftv.h but not in the spec")
    report(not why, f"uapi header matches the spec value for value "
           f"({len(gen_names)} names)", "\n".join(why))
    return ours


def policy_tables():
    with open(NETLINK_C, encoding="utf-8") as f:
        text = f.read()
    tables = {}
    for m in re.finditer(r"static const struct nla_policy (\w+)_policy"
                         r"\[\w+ \+ 1\] = \{(.*?)\n\};", text, re.S):
        entries = {}
        parts = re.split(r"\n\s*\[(\w+)\]\s*=\s*", "\n" + m.group(2))
        for name, val in zip(parts[1::2], parts[2::2]):
            entries[name] = " ".join(val.split()).rstrip(",")
        tables[m.group(1)] = entries
    return tables


def expected_policy(attr, sets, defs, vals):
    """The policy entry the spec asks for, or None for none at all."""
    t = attr["type"]
    checks = attr.get("checks", {})

    def val(v):
        if isinstance(v, int):
            return v
        d = defs[v]
        return d["value"]

    if t == "pad" or attr.get("value") == 0:
        return None
    if t == "unused":
        return "{ .type = NLA_REJECT }"
    doc = " ".join(attr.get("doc", "").split())
    if re.search(r"get only|in events only|rejected elsewhere|rejected by set",
                 doc, re.I):
        return "{ .type = NLA_REJECT }"
    if t in ("u8", "u16", "u32", "u64"):
        nla = f"NLA_{t.upper()}"
        if "enum" in attr and attr.get("enum-as-flags"):
            mask = 0
            for i, _ in enumerate(defs[attr["enum"]]["entries"]):
                mask |= 1 << i
            return f"NLA_POLICY_MASK({nla}, {mask})"
        if "enum" in attr:
            return f"NLA_POLICY_MAX({nla}, "\
                   f"{len(defs[attr['enum']]['entries']) - 1})"
        lo, hi = checks.get("min"), checks.get("max")
        if lo is not None and hi is not None:
            return f"NLA_POLICY_RANGE({nla}, {val(lo)}, {val(hi)})"
        if hi is not None:
            return f"NLA_POLICY_MAX({nla}, {val(hi)})"
        if lo is not None:
            return f"NLA_POLICY_MIN({nla}, {val(lo)})"
        return f"{{ .type = {nla} }}"
    if t == "binary":
        if "exact-len" in checks:
            return f"NLA_POLICY_EXACT_LEN({val(checks['exact-len'])})"
        return f"NLA_POLICY_RANGE(NLA_BINARY, {val(checks['min-len'])}, "\
               f"{val(checks['max-len'])})"
    if t == "string":
        return f"{{ .type = NLA_NUL_STRING, .len = {val(checks['max-len'])} }}"
    # A subset of a set is parsed with the whole set's policy.
    nested = attr.get("nested-attributes", "")
    nested = sets.get(nested, {}).get("subset-of", nested).replace("-", "_")
    if t == "nest":
        return f"NLA_POLICY_NESTED({nested}_policy)"
    if t == "indexed-array":
        return f"NLA_POLICY_NESTED_ARRAY({nested}_policy)"
    raise ValueError(f"no rule for type {t}")


def evaluate(entry, vals):
    """A policy entry from netlink.c with its C names replaced by values."""
    consts = {k: v for k, v in vals.items() if isinstance(v, int)}
    consts["IFNAMSIZ"] = 16
    entry = re.sub(r"\b[A-Z_][A-Z0-9_]*\b",
                   lambda m: str(consts.get(m.group(0), m.group(0))), entry)
    return re.sub(r"\b(\d+) ([-+]) (\d+)\b",
                  lambda m: str(int(m.group(1)) + int(m.group(3)) *
                                (1 if m.group(2) == "+" else -1)), entry)


def check_policies(spec, vals):
    defs = {d["name"]: d for d in spec.get("definitions", [])}
    sets = {s["name"]: s for s in spec["attribute-sets"]}
    tables = policy_tables()
    why = []
    for set_name, table in sorted(tables.items()):
        aset = sets.get(set_name.replace("_", "-"))
        if not aset:
            why.append(f"{set_name}_policy has no attribute set in the spec")
            continue
        seen = set()
        for attr in aset["attributes"]:
            cname = c_name(aset["name-prefix"], attr["name"])
            want = expected_policy(attr, sets, defs, vals)
            have = table.get(cname)
            seen.add(cname)
            if want is None:
                if have is not None:
                    why.append(f"{set_name}_policy has {cname}, which the "
                               f"spec says is {attr['type']}")
                continue
            if have is None:
                why.append(f"{set_name}_policy lacks {cname}: {want}")
                continue
            if evaluate(have, vals) != want:
                why.append(f"{set_name}_policy[{cname}] = {have}; the spec "
                           f"says {want}")
        for cname in table:
            if cname not in seen:
                why.append(f"{set_name}_policy has {cname}, not in the spec")
    report(not why and bool(tables),
           f"netlink.c policies match the spec "
           f"({', '.join(sorted(tables))})", "\n".join(why))


def check_drop_names(spec):
    sets = {s["name"]: s for s in spec["attribute-sets"]}
    names = [a["name"].replace("-", "_") for a in sets["drops"]["attributes"]
             if a["type"] not in ("unused", "pad")]
    why = []
    gen = subprocess.run([sys.executable,
                          os.path.join(ROOT, "tools/ftvctl/gen-drop-names.py")],
                         capture_output=True, text=True, check=False)
    with open(os.path.join(ROOT, "tools/ftvctl/drop-names.h"),
              encoding="utf-8") as f:
        if gen.returncode or f.read() != gen.stdout:
            why.append("tools/ftvctl/drop-names.h is not what "
                       "gen-drop-names.py makes of the spec: run it again")
            why.append(gen.stderr)
    with open(os.path.join(ROOT, "tools/ftvctl/man/ftvctl.8"),
              encoding="utf-8") as f:
        man = f.read()
    for n in names:
        if not re.search(rf"^\.[BRI]+\s+(?:\(\s*)?{n}\b", man, re.M):
            why.append(f"ftvctl(8) does not list {n}")
    report(not why, f"drop reasons in ftvctl and its man page come from "
           f"the spec ({len(names)})", "\n".join(why))


def main():
    print("KTAP version 1")
    print("1..6")
    if not os.path.isdir(YNL):
        for name in ("schema", "ynl-gen-c", "uapi header", "policies",
                     "kernel header", "drop reasons"):
            report(False, f"{name}: {YNL} missing (make ynl)")
        return 1
    spec = load_spec()
    check_schema(spec)
    rc, out, text = run_gen("uapi", "--header")
    report(rc == 0 and bool(text), "ynl-gen-c --mode uapi accepts the spec",
           out)
    vals = check_header(text) if text else {}
    if not text:
        report(False, "uapi header matches the spec (no header generated)")
    check_policies(spec, vals)
    # Linux 6.12's generator writes no kernel source for a binary
    # attribute with a length range (allowedip ipaddr), nor a user library
    # that sends indexed arrays: limits of the generator, not the spec.
    rc, out, text = run_gen("kernel", "--header")
    report(rc == 0 and bool(text),
           "ynl-gen-c --mode kernel --header accepts the spec", out)
    check_drop_names(spec)
    print(f"# {results.count(True)} passed, {results.count(False)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
