#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write drop-names.h from the drops attribute set of docs/netlink/ftv.yaml.

The spec is the one list of drop reasons; ftvctl's names for them (text and
JSON) come from here. Run it after changing the set:

    tools/ftvctl/gen-drop-names.py >tools/ftvctl/drop-names.h

selftests/lib/ynl_check.py fails while the file in the tree differs from what
this prints.
"""

import os
import sys

import yaml

SPEC = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                    "../../docs/netlink/ftv.yaml")


def main():
    with open(SPEC, encoding="utf-8") as f:
        spec = yaml.safe_load(f)
    aset = next(s for s in spec["attribute-sets"] if s["name"] == "drops")
    prefix = aset["name-prefix"].upper().replace("-", "_")
    rows = []
    for attr in aset["attributes"]:
        if attr["type"] in ("unused", "pad"):
            continue
        cname = prefix + attr["name"].upper().replace("-", "_")
        device_only = "(device only" in " ".join(attr.get("doc", "").split())
        rows.append((cname, attr["name"].replace("-", "_"), device_only))
    out = sys.stdout
    out.write("/* SPDX-License-Identifier: GPL-2.0 */\n")
    out.write("/* Generated from docs/netlink/ftv.yaml by gen-drop-names.py:"
              " do not edit. */\n\n")
    out.write("#ifndef FTVCTL_DROP_NAMES_H\n#define FTVCTL_DROP_NAMES_H\n\n")
    out.write("#include <stdbool.h>\n\n#include <linux/ftv.h>\n\n")
    out.write("/* The names users see, in text and JSON alike; NULL for no"
              " reason. */\n")
    out.write("static const char *const drop_names[FTV_DROPS_A_MAX + 1] = {\n")
    for cname, name, _ in rows:
        out.write(f"\t[{cname}] = \"{name}\",\n")
    out.write("};\n\n")
    out.write("/* Reasons only a device counts: no peer is to blame. */\n")
    out.write("static const bool drop_device_only[FTV_DROPS_A_MAX + 1] = {\n")
    for cname, _, device_only in rows:
        if device_only:
            out.write(f"\t[{cname}] = true,\n")
    out.write("};\n\n#endif /* FTVCTL_DROP_NAMES_H */\n")


if __name__ == "__main__":
    main()
