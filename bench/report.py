#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Figures, table and chart from what bench/guest.sh recorded.

    bench/report.py report OUTDIR RESULTS-DIR NAME
        reads OUTDIR/samples.jsonl, OUTDIR/logs/*.json (iperf3 -J),
        OUTDIR/guest/ and OUTDIR/host/; writes RESULTS-DIR/NAME.md,
        NAME.json (medians, ratios and every raw sample), NAME.png,
        NAME-path.png (the path matrix, when measured) and timestamped
        copies; prints the table and the ratios.
    bench/report.py summary IPERF-JSON
        one line for the guest's log.

Derived figures, per sample:
  mbps        iperf3's receiver throughput (TCP: end.sum_received)
  cpu_s_per_gb  non-idle jiffies of the whole VM (user + nice + system +
              irq + softirq, both ends of the test) from just before the
              run to its end, in CPU seconds, per 10^9 bytes the receiving
              device counted over the same time
  busy        the same jiffies as a fraction of all the VM's CPU time
  kpps        packets the receiving device counted per second while the
              traffic flowed (pps test)
  rtt_ms      median of 30 idle pings through the tunnel (rtt test)
  mb_s        MB (10^6 bytes) per second tcrypt sealed on one CPU (aead)
  overhead    repair messages as a % of all the packets the sending ftv
              sent (loss and path tests)
  frac        kept: a run's throughput over the same configuration's
              lossless one in the same repeat (loss and path tests)
The path test (units path_RTT_LOSS_pSTREAMS_DIR) runs through a router
namespace with netem on both its veths and every offload at its default;
its rows have a table of their own, with ftv/WireGuard meaning
path-ftv/path-wireguard and ftv/veth meaning path-ftv/path-tcp.
Besides the samples: tshark's view of captured ftv streams (wire1,
wire4) and the replay drops in both ends' ftvctl show --json after each
repeat.
Each cell is the median over the repeats; the +- is half the range.
Nothing here is a pass or a fail: targets are reported, not asserted.
"""

import datetime
import json
import os
import re
import shutil
import statistics
import sys

USER_HZ = os.sysconf("SC_CLK_TCK")

CONFIGS = [
    ("veth", "veth"),
    ("veth-nooffload", "veth, offloads off"),
    ("wireguard", "WireGuard"),
    ("ftv", "ftv"),
    ("ftv-fecoff", "ftv, fec off"),
    ("ftv-shapeoff", "ftv, shape off"),
    ("openvpn-tcp", "OpenVPN over TCP"),
    ("path-tcp", "plain TCP via router"),
    ("path-wireguard", "WireGuard via router"),
    ("path-ftv", "ftv via router"),
    ("path-ftv-fecoff", "ftv fec off via router"),
]
PATH_CONFIGS = ("path-tcp", "path-wireguard", "path-ftv", "path-ftv-fecoff")
# path_RTT_LOSS_pSTREAMS_DIR, as bench/guest.sh names the path units, and
# path_kept_RTT_LOSS, the derived kept fractions
PATH_UNIT = re.compile(r"path_([0-9.]+)_([0-9.]+)_p([0-9]+)_(fwd|rev)$")
PATH_KEPT = re.compile(r"path_kept_([0-9.]+)_([0-9.]+)$")
# The round trip of the kept fractions and of the FEC rows.
FEC_RTT = 100.0
LOSSES = ["0", "0.1", "0.5", "1", "5"]

# (test, metric, label, unit)
ROWS = [
    ("tcp1_fwd", "mbps", "1 TCP stream A→B", "Mbit/s"),
    ("tcp1_rev", "mbps", "1 TCP stream B→A", "Mbit/s"),
    ("tcp4_fwd", "mbps", "4 TCP streams A→B", "Mbit/s"),
    ("tcp4_rev", "mbps", "4 TCP streams B→A", "Mbit/s"),
    ("pps", "kpps", "64-byte UDP received", "kpps"),
    ("tcp1_fwd", "cpu_s_per_gb", "CPU per GB, 1 stream A→B", "CPU-s/GB"),
    ("tcp4_fwd", "cpu_s_per_gb", "CPU per GB, 4 streams A→B", "CPU-s/GB"),
    ("rtt", "rtt_ms", "idle ping round trip", "ms"),
] + [("loss_" + x, "mbps", f"10 ms delay, {x} % loss", "Mbit/s")
     for x in LOSSES] + [("loss_" + x, "overhead",
                          f"repair messages at {x} % loss", "% of data")
                         for x in LOSSES] + [
    ("kept_1", "frac", "kept at 1 % loss (÷ 0 %)", "fraction"),
    ("kept_5", "frac", "kept at 5 % loss (÷ 0 %)", "fraction"),
    ("peers_setconf", "seconds", "setconf of BENCH_PEERS peers", "s"),
    ("peers_show", "seconds", "show --json / wg show dump of them", "s"),
    ("peers_mem", "kb_per_peer", "kernel memory per peer", "KB"),
    ("peers_peerdel", "seconds", "removing one peer among them", "s"),
    ("peers_linkdel", "seconds", "ip link del with them", "s"),
    ("peers_ping", "ok", "a ping through a real peer among them", "1 = yes"),
]

NONIDLE = (0, 1, 2, 5, 6)  # user nice system irq softirq in /proc/stat


def load_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def iperf_figures(j):
    """Throughput and friends from iperf3 -J output, or {} if it failed."""
    if not j or "end" not in j or j.get("error"):
        return {}
    end = j["end"]
    fig = {}
    if "sum_received" in end:
        fig["mbps"] = end["sum_received"]["bits_per_second"] / 1e6
        fig["retransmits"] = end.get("sum_sent", {}).get("retransmits")
    elif "sum" in end:
        s = end["sum"]
        fig["mbps"] = s.get("bits_per_second", 0) / 1e6
        fig["udp_sent_packets"] = s.get("packets")
        fig["udp_lost_percent"] = s.get("lost_percent")
    return fig


def series_figures(series):
    """CPU per GB, busy fraction and packet rate from the sampled counters.

    Each point is [time, user, nice, system, idle, iowait, irq, softirq,
    steal, rx_bytes, rx_packets]. CPU and bytes are taken over the whole
    run (start-up and slow start cost both, in proportion); the packet
    rate over the half-second intervals that carried traffic, less the
    first and the last, which the run only partly covers.
    """
    if not series or len(series) < 2:
        return {}
    first, last = series[0], series[-1]
    cpu = sum(last[1 + i] - first[1 + i] for i in NONIDLE)
    total = sum(last[i] - first[i] for i in range(1, 9))
    dbytes = last[9] - first[9]
    fig = {"run_s": last[0] - first[0],
           "busy": cpu / total if total > 0 else None}
    if dbytes > 0:
        fig["cpu_s_per_gb"] = cpu / USER_HZ / (dbytes / 1e9)
    rates = [((b[10] - a[10]) / (b[0] - a[0]), a, b)
             for a, b in zip(series, series[1:]) if b[0] > a[0]]
    peak = max((r for r, _, _ in rates), default=0)
    busy = [i for i, (r, _, _) in enumerate(rates) if r > peak / 10]
    if peak > 0:
        lo, hi = busy[0], busy[-1]
        if hi - lo >= 2:
            lo, hi = lo + 1, hi - 1
        a, b = rates[lo][1], rates[hi][2]
        fig["kpps"] = (b[10] - a[10]) / (b[0] - a[0]) / 1e3
    return fig


def summary(path):
    j = load_json(path)
    fig = iperf_figures(j)
    if not fig:
        err = (j or {}).get("error", "no output")
        return f"failed: {err}"
    line = f"{fig['mbps']:.1f} Mbit/s"
    if fig.get("retransmits") is not None:
        line += f", {fig['retransmits']} retransmits"
    if fig.get("udp_sent_packets") is not None:
        line += f", {fig['udp_sent_packets']} datagrams sent"
    return line


def read_text(path, default=""):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return default


def crypto_drivers(text):
    """name -> "driver (module)" for the ChaCha20/Poly1305 entries."""
    out = {}
    for block in text.split("\n\n"):
        kv = {}
        for line in block.splitlines():
            k, _, v = line.partition(":")
            kv[k.strip()] = v.strip()
        name = kv.get("name", "")
        if any(x in name for x in ("chacha", "poly1305", "rfc7539")):
            out.setdefault(name, []).append(
                f"{kv.get('driver')} ({kv.get('module')})")
    return {k: sorted(set(v)) for k, v in sorted(out.items())}


def load_samples(outdir):
    samples = []
    with open(os.path.join(outdir, "samples.jsonl")) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            s = json.loads(line)
            if s.get("iperf"):
                s.update(iperf_figures(
                    load_json(os.path.join(outdir, s["iperf"]))))
            s.update(series_figures(s.get("series")))
            if s["test"] != "pps":
                s.pop("kpps", None)
            if s["test"] == "aead" and s.get("bytes") and s.get("seconds"):
                s["mb_s"] = s["bytes"] / s["seconds"] / 1e6
            if (s["test"].startswith(("fec_loss_", "fec_path_"))
                    and s.get("packets")):
                s["test"] = s["test"][4:]
                s["overhead"] = 100.0 * s["repairs"] / s["packets"]
            samples.append(s)
    # kept_1, kept_5: within each repeat, 1 and 5 % loss throughput over
    # 0 % loss
    by = {(s["repeat"], s["config"], s["test"]): s for s in samples
          if s.get("mbps") is not None}
    for (r, cfg, test), s in list(by.items()):
        if test != "loss_0" or not s.get("mbps"):
            continue
        for x in ("1", "5"):
            one = by.get((r, cfg, "loss_" + x))
            if one:
                samples.append({"repeat": r, "config": cfg,
                                "test": "kept_" + x,
                                "frac": one["mbps"] / s["mbps"]})
    samples += path_kept(by)
    return samples


def path_unit(test):
    """(rtt_ms, loss_percent, streams, direction) of a path unit, or None."""
    m = PATH_UNIT.match(test)
    if not m:
        return None
    return float(m.group(1)), float(m.group(2)), int(m.group(3)), m.group(4)


def is_path(test):
    return test.startswith("path_")


def path_kept(by):
    """path_kept_100_L: within each repeat, one stream A->B at 100 ms and
    L % loss over the same configuration's lossless run at 100 ms."""
    base = {}
    for (r, cfg, test), s in by.items():
        u = path_unit(test)
        if u and u[0] == FEC_RTT and u[1] == 0 and u[2:] == (1, "fwd"):
            base[(r, cfg)] = s["mbps"]
    out = []
    for (r, cfg, test), s in by.items():
        u = path_unit(test)
        if (not u or u[0] != FEC_RTT or u[1] == 0 or u[2:] != (1, "fwd")
                or not base.get((r, cfg))):
            continue
        rtt, loss = test.split("_")[1:3]
        out.append({"repeat": r, "config": cfg,
                    "test": f"path_kept_{rtt}_{loss}",
                    "frac": s["mbps"] / base[(r, cfg)]})
    return out


def num_text(x):
    """10.0 -> "10", 0.5 -> "0.5"."""
    return f"{x:g}"


def path_label(test):
    rtt, loss, streams, d = path_unit(test)
    way = "A→B" if d == "fwd" else "B→A"
    return (f"path {num_text(rtt)} ms RTT, {num_text(loss)} % loss, "
            f"{streams} stream{'s' if streams > 1 else ''} {way}")


def path_rows(samples):
    """The path table's rows, for the units that were measured: throughput
    by RTT, loss, streams and direction; then what fec auto keeps of its
    lossless rate and the repair messages it sent, for one stream A->B at
    100 ms (every run's repair count is in the JSON)."""
    tests = {s["test"] for s in samples}
    units = sorted((t for t in tests if path_unit(t)),
                   key=lambda t: (path_unit(t), t))
    rows = [(t, "mbps", path_label(t), "Mbit/s") for t in units]
    kept = sorted((t for t in tests if PATH_KEPT.match(t)),
                  key=lambda t: float(PATH_KEPT.match(t).group(2)))
    for t in kept:
        rtt, loss = PATH_KEPT.match(t).groups()
        rows.append((t, "frac", f"kept at path {rtt} ms RTT, {loss} % loss, "
                     "1 stream A→B (÷ 0 %)", "fraction"))
    for t in units:
        rtt, loss, streams, d = path_unit(t)
        if rtt == FEC_RTT and (streams, d) == (1, "fwd"):
            rows.append((t, "overhead", "repair messages at "
                         + path_label(t)[5:], "% of data"))
    return rows


def path_test(samples, rtt, loss, streams=1, d="fwd"):
    """The name of the path unit measured at these figures, or None."""
    for s in samples:
        if path_unit(s["test"]) == (rtt, loss, streams, d):
            return s["test"]
    return None


def medians(samples):
    vals = {}
    for s in samples:
        for metric in ("mbps", "kpps", "cpu_s_per_gb", "frac", "busy",
                       "retransmits", "rtt_ms", "mb_s", "overhead",
                       "seconds", "kb_per_peer", "ok"):
            # a path run's rtt_ms is the netem it ran with, not a figure
            if metric == "rtt_ms" and s["test"] != "rtt":
                continue
            v = s.get(metric)
            if v is not None:
                vals.setdefault((s["config"], s["test"], metric), []).append(v)
    return {k: {"median": statistics.median(v), "min": min(v), "max": max(v),
                "n": len(v)} for k, v in vals.items()}


def ftv_drops(outdir, prefix="ftv-"):
    """Each repeat's drop counters of ftv's peers, both ends summed: the
    ftv configuration's (guest/ftv-*.json), or path-ftv's with prefix
    "path-ftv-"."""
    g = os.path.join(outdir, "guest")
    out = {}
    for name in sorted(os.listdir(g)) if os.path.isdir(g) else []:
        if not (name.startswith(prefix) and name.endswith(".json")):
            continue
        j = load_json(os.path.join(g, name)) or {}
        rep = name.rsplit("-r", 1)[-1][:-5]
        tot = out.setdefault(rep, {})
        for dev in j.values():
            for peer in dev.get("peers", []):
                for k, v in peer.get("drops", {}).items():
                    tot[k] = tot.get(k, 0) + v
    return out


def wire(samples):
    return {s["test"]: s for s in samples
            if s["config"] == "ftv" and s["test"].startswith("wire")}


def host_meta(outdir):
    h = os.path.join(outdir, "host")
    meta = {k: read_text(os.path.join(h, k)) for k in (
        "date", "command", "git", "module-changes", "cpu-model", "qemu",
        "qemu-cpu", "other-vms-start", "loadavg-start", "loadavg-end")}
    l1 = []
    for line in read_text(os.path.join(h, "load-samples")).splitlines():
        parts = line.split()
        if len(parts) >= 2:
            l1.append(float(parts[1]))
    meta["load1_max"] = max(l1) if l1 else None
    meta["load1_mean"] = round(statistics.mean(l1), 2) if l1 else None
    return meta


def guest_meta(outdir):
    g = os.path.join(outdir, "guest")
    meta = {k: read_text(os.path.join(g, k)) for k in (
        "kernel", "cpu-model", "cpu-flags", "nproc", "loadavg-start",
        "loadavg-end", "iperf3-version", "ftv-version", "ftv-srcversion")}
    params = read_text(os.path.join(g, "parameters")).split()
    keys = ("repeats", "tcp_seconds", "omit_seconds", "loss_seconds",
            "pps_seconds", "delay", "path_seconds", "path_omit_seconds")
    meta["parameters"] = dict(zip(keys, params))
    meta["crypto"] = crypto_drivers(read_text(os.path.join(g, "crypto")))
    meta["crypto_modules"] = sorted(
        line.split()[0]
        for line in read_text(os.path.join(g, "lsmod")).splitlines()[1:]
        if any(x in line.split()[0] for x in ("chacha", "poly", "curve")))
    for cfg, _ in CONFIGS:
        link = read_text(os.path.join(g, "link-" + cfg))
        if "mtu" in link:
            meta.setdefault("mtu", {})[cfg] = int(
                link.split(" mtu ")[1].split()[0])
    return meta


def fmt(v, metric):
    if v is None:
        return "–"
    if metric == "mbps":
        return f"{v:.0f}" if v >= 100 else f"{v:.1f}"
    if metric == "kpps":
        return f"{v:.1f}"
    return f"{v:.2f}"


def cell(med, cfg, test, metric):
    m = med.get((cfg, test, metric))
    if not m:
        return "–"
    text = fmt(m["median"], metric)
    if m["n"] > 1 and m["median"]:
        spread = (m["max"] - m["min"]) / 2 / m["median"] * 100
        text += f" ±{spread:.0f}%"
    return text


def ratio(med, test, metric, num, den):
    a = med.get((num, test, metric))
    b = med.get((den, test, metric))
    if not a or not b or not b["median"]:
        return None
    return a["median"] / b["median"]


def veth_for(test):
    if is_path(test):
        return "path-tcp"
    return "veth-nooffload" if test.startswith(("loss_", "kept_")) else "veth"


def trio(test):
    """The configurations a row's ratios divide: ftv, WireGuard and the
    plain link (path rows: the same through the router)."""
    if is_path(test):
        return "path-ftv", "path-wireguard", "path-tcp"
    return "ftv", "wireguard", veth_for(test)


def paired(samples, test, metric, num, den):
    """Median over the repeats of num/den measured in the same repeat."""
    # Only samples with the metric: a repair count (fec_*) shares its
    # run's test name and must not hide the run's throughput.
    val = {(s["config"], s["repeat"]): s[metric] for s in samples
           if s["test"] == test and s.get(metric) is not None}
    rs = [val[(num, r)] / val[(den, r)] for c, r in val
          if c == num and val[(num, r)] is not None
          and val.get((den, r))]
    return statistics.median(rs) if rs else None


def ratios(med, samples, rows=ROWS):
    """Per row: ftv/WireGuard and ftv/veth of the medians, and ftv/WireGuard
    paired; in path rows "ftv", "wireguard" and "veth" are the path
    configurations (named in the fields ftv, wireguard and veth)."""
    out = []
    for test, metric, label, unit in rows:
        ftv, wg, veth = trio(test)
        out.append({"test": test, "metric": metric, "label": label,
                    "unit": unit,
                    "ftv/wireguard": ratio(med, test, metric, ftv, wg),
                    "ftv/veth": ratio(med, test, metric, ftv, veth),
                    "ftv/wireguard paired": paired(samples, test, metric,
                                                   ftv, wg),
                    "ftv": ftv, "wireguard": wg, "veth": veth})
    return out


def path_targets(med, samples, both):
    """The long-path targets: ftv against WireGuard through the router."""
    def pr(rtt, loss, streams=1, d="fwd"):
        test = path_test(samples, rtt, loss, streams, d)
        return test and paired(samples, test, "mbps", "path-ftv",
                               "path-wireguard")

    t = []
    v = [pr(rtt, 0, p, d) for rtt in (40, 100, 200) for p in (1, 4)
         for d in ("fwd", "rev")]
    t.append(("long paths, no loss: ftv ≥ WireGuard (paired medians), 1 "
              "and 4 streams each way at 40, 100 and 200 ms", v,
              both(v, lambda x: x >= 1.0)))
    kept = [k for k in {s["test"] for s in samples}
            if PATH_KEPT.match(k) and float(PATH_KEPT.match(k).group(1))
            == FEC_RTT and float(PATH_KEPT.match(k).group(2)) == 1]
    m = med.get(("path-ftv", kept[0], "frac")) if kept else None
    v = [m["median"] if m else None]
    t.append(("100 ms, 1 % loss: fec auto keeps ≥ 0.5 of its own lossless "
              "rate", v, both(v, lambda x: x >= 0.5)))
    v = [pr(FEC_RTT, 1, 1, "fwd"), pr(FEC_RTT, 1, 1, "rev")]
    t.append(("100 ms, 1 % loss: ftv carries ≥ 10× WireGuard (paired, 1 "
              "stream each way)", v, both(v, lambda x: x >= 10)))
    return t


def targets(med, samples=()):
    def r(test, metric="mbps"):
        return ratio(med, test, metric, "ftv", "wireguard")

    def kept(cfg, x="1"):
        m = med.get((cfg, "kept_" + x, "frac"))
        return m["median"] if m else None

    def both(vals, ok):
        if any(v is None for v in vals):
            return None
        return all(ok(v) for v in vals)

    t = []
    v = [r("tcp1_fwd"), r("tcp1_rev")]
    t.append(("1 TCP stream, ftv/WireGuard ≥ 1.10 (both directions)", v,
              both(v, lambda x: x >= 1.10)))
    v = [r("tcp4_fwd"), r("tcp4_rev")]
    t.append(("4 TCP streams, ftv/WireGuard ≥ 1.10 (both directions)", v,
              both(v, lambda x: x >= 1.10)))
    v = [r("pps", "kpps")]
    t.append(("64-byte packets per second, ftv/WireGuard ≥ 1.0", v,
              both(v, lambda x: x >= 1.0)))
    v = [r("tcp1_fwd", "cpu_s_per_gb"), r("tcp4_fwd", "cpu_s_per_gb")]
    t.append(("CPU per GB, ftv/WireGuard ≤ 1.0 (1 and 4 streams)", v,
              both(v, lambda x: x <= 1.0)))
    v = [r("rtt", "rtt_ms")]
    t.append(("idle round trip, ftv/WireGuard ≤ 1.10", v,
              both(v, lambda x: x <= 1.10)))
    v = [kept("ftv")]
    t.append(("at 1 % loss ftv (fec auto) keeps ≥ 0.5 of its own lossless "
              "throughput", v, both(v, lambda x: x >= 0.5)))
    v = [r("loss_5")]
    t.append(("at 5 % loss ftv (fec auto) carries ≥ 10× WireGuard", v,
              both(v, lambda x: x >= 10)))
    v = [ratio(med, t, "mbps", "ftv", "ftv-shapeoff")
         for t in ("tcp1_fwd", "tcp1_rev", "tcp4_fwd", "tcp4_rev")]
    if any(x is not None for x in v):
        t.append(("bulk with shaping within 2 % of without (shape on ÷ "
                  "off, 1 and 4 streams each way)", v,
                  both(v, lambda x: x >= 0.98)))
    v = [ratio(med, "loss_0", "mbps", "ftv", "ftv-fecoff")]
    t.append(("at 0 % loss fec auto is within 3 % of fec off "
              "(auto ÷ off)", v, both(v, lambda x: x >= 0.97)))
    t += path_targets(med, samples, both)

    def ftv(test, metric):
        m = med.get(("ftv", test, metric))
        return m["median"] if m else None

    if ftv("peers_setconf", "seconds") is not None:
        v = [r("peers_setconf", "seconds"), r("peers_show", "seconds")]
        t.append(("many peers: setconf and show, ftv/WireGuard ≤ 1.0", v,
                  both(v, lambda x: x <= 1.0)))
        v = [ftv("peers_linkdel", "seconds")]
        t.append(("many peers: ip link del ≤ 10 s", v,
                  both(v, lambda x: x <= 10)))
        v = [ftv("peers_peerdel", "seconds")]
        t.append(("many peers: one peer del < 1 s", v,
                  both(v, lambda x: x < 1)))
        v = [ftv("peers_mem", "kb_per_peer")]
        t.append(("many peers: ≤ 1.3 KB of kernel memory per peer", v,
                  both(v, lambda x: x <= 1.3)))
        v = [ftv("peers_ping", "ok")]
        t.append(("many peers: a ping through a real peer among them", v,
                  both(v, lambda x: x == 1)))
    return [{"target": name, "values": vals, "met": met}
            for name, vals, met in t]


def num(v, digits=2):
    if isinstance(v, int):
        return str(v)
    return "–" if v is None else f"{v:.{digits}f}"


def aead_lines(med):
    """The AEAD ceiling beside what one stream achieved."""
    m = med.get(("aead", "aead", "mb_s"))
    if not m:
        return []
    ceil = m["median"] * 8
    lines = [f"AEAD ceiling: the kernel's ChaCha20-Poly1305 (tcrypt mode "
             f"213) sealed {m['median']:.1f} MB/s of 1420-byte messages on "
             f"one CPU, {ceil:.0f} Mbit/s; a stream whose sealing and "
             f"opening ran on one CPU could not beat half that "
             f"({ceil / 2:.0f} Mbit/s)."]
    for cfg, name in (("ftv", "ftv"), ("wireguard", "WireGuard")):
        one = med.get((cfg, "tcp1_fwd", "mbps"))
        if one:
            lines.append(f"- {name}, 1 stream A→B: {one['median']:.0f} Mbit/s"
                         f", {one['median'] / ceil:.2f} of one CPU's "
                         "sealing rate")
    return lines + [""]


def wire_lines(samples, drops, path_drops=None):
    lines = []
    for test, w in sorted(wire(samples).items()):
        m = re.match(r"wire(\d+)([AB]?)$", test)
        streams, side = m.group(1), m.group(2)
        where = (f"sent by {side}, captured as it left {side}" if side
                 else "on A's cable, both directions")
        lines.append(f"- ftv, {streams} stream(s) A→B, segments {where}: "
                     f"{w['frames']} frames, tshark finds "
                     f"{w['out_of_order']} out of order, "
                     f"{w['retransmissions']} retransmitted "
                     f"({w['lost_segment']} after a segment the capture "
                     "missed)")
    for rep, d in sorted(drops.items()):
        nz = ", ".join(f"{k} {v}" for k, v in sorted(d.items()) if v)
        lines.append(f"- ftv drop counters after repeat {rep}, both ends: "
                     f"{nz or 'all zero'}")
    for rep, d in sorted((path_drops or {}).items()):
        nz = ", ".join(f"{k} {v}" for k, v in sorted(d.items()) if v)
        lines.append(f"- ftv via router: drop counters after repeat {rep}, "
                     f"both ends: {nz or 'all zero'}")
    return lines + ([""] if lines else [])


def table(med, rows, rats, configs, plain):
    """A Markdown table of ROWS for CONFIGS; PLAIN names the ftv/veth
    column."""
    names = dict(CONFIGS)
    head = ["test"] + [names[c] for c in configs] + [
        "ftv/WireGuard", f"ftv/{plain}", "ftv/WireGuard paired"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for (test, metric, label, unit), rt in zip(rows, rats):
        if not any((c, test, metric) in med for c in configs):
            continue
        row = [f"{label} ({unit})"]
        row += [cell(med, c, test, metric) for c in configs]
        row += [num(rt["ftv/wireguard"]), num(rt["ftv/veth"]),
                num(rt["ftv/wireguard paired"])]
        lines.append("| " + " | ".join(row) + " |")
    return lines + [""]


def markdown(med, meta, rows, rats, tgts, configs, samples=(), drops=None,
             path_drops=None, name="NAME"):
    g, h = meta["guest"], meta["host"]
    p = g.get("parameters", {})
    lines = [f"# make bench — {h.get('date', '?')}", ""]
    lines.append(f"Command: `{h.get('command') or 'make bench'}`  ")
    lines.append(f"Guest: Linux {g.get('kernel')}, {g.get('nproc')} vCPUs, "
                 f"`-cpu {h.get('qemu-cpu')}` ({g.get('cpu-model')}), "
                 f"{h.get('qemu')}, software emulation  ")
    crypto = "; ".join(f"{k}: {', '.join(v)}"
                       for k, v in g.get("crypto", {}).items())
    lines.append(f"/proc/crypto: {crypto or '–'}  ")
    lines.append("Crypto modules loaded: "
                 f"{', '.join(g.get('crypto_modules') or []) or '–'}  ")
    mtu = ", ".join(f"{k} {v}" for k, v in g.get("mtu", {}).items())
    lines.append(f"MTU: {mtu}  ")
    lines.append(f"ftv: {h.get('git')}"
                 f"{' + uncommitted module changes' if h.get('module-changes') else ''}"
                 f", srcversion {g.get('ftv-srcversion') or '?'}  ")
    lines.append(f"Host: {h.get('cpu-model')}; load average at start "
                 f"{h.get('loadavg-start')}, at end {h.get('loadavg-end')}, "
                 f"1-minute mean {h.get('load1_mean')} and max "
                 f"{h.get('load1_max')} during the run; other VMs running at "
                 f"start: {h.get('other-vms-start') or 0}  ")
    lines.append(f"Guest load average at start {g.get('loadavg-start')}, "
                 f"at end {g.get('loadavg-end')}  ")
    lines.append(f"{p.get('repeats')} repeats in one boot, configurations "
                 f"interleaved run by run; TCP runs {p.get('tcp_seconds')} s after "
                 f"{p.get('omit_seconds')} s omitted, loss steps "
                 f"{p.get('loss_seconds')} s, pps {p.get('pps_seconds')} s"
                 + (f", path runs {p['path_seconds']} s after "
                    f"{p.get('path_omit_seconds')} s omitted"
                    if p.get("path_seconds") else "")
                 + ". Cells: median ± half the range.")
    lines.append("")
    short = [c for c in configs if c not in PATH_CONFIGS]
    longp = [c for c in configs if c in PATH_CONFIGS]
    pairs = list(zip(rows, rats))
    if short:
        sel = [(r, rt) for r, rt in pairs if not is_path(r[0])]
        lines += table(med, [r for r, _ in sel], [rt for _, rt in sel],
                       short, "veth")
        lines.append("The ratios divide the medians; \"paired\" is the "
                     "median over the repeats of ftv/WireGuard measured in "
                     "the same repeat, a minute or less apart. ftv/veth is "
                     "against veth with offloads on, except in the loss "
                     "rows, which run with the cable's offloads off for "
                     "every configuration. CPU per GB counts both ends (one "
                     "VM); lower is better.")
        lines.append("")
    if longp:
        lines.append("## Long paths: through a router, offloads on")
        lines.append("")
        lines.append("A — R — B: R forwards between two veth pairs and "
                     "delays what each of its veths sends by half the round "
                     "trip (netem, with the loss given on both, so delay and "
                     "loss apply each way); every offload as veth has it "
                     "by default (TSO and GSO on, GRO off); A and B allow TCP 32 MB of buffer "
                     "(tcp_rmem, tcp_wmem) so that the window does not cap "
                     "a 200 ms path. ftv/WireGuard here is ftv via router ÷ "
                     "WireGuard via router, ftv/plain TCP ftv via router ÷ "
                     "plain TCP via router; \"kept\" is a run's throughput "
                     "over the same configuration's lossless one at the "
                     "same RTT, in the same repeat. Chart: "
                     f"{name}-path.png.")
        lines.append("")
        sel = [(r, rt) for r, rt in pairs if is_path(r[0])]
        lines += table(med, [r for r, _ in sel], [rt for _, rt in sel],
                       longp, "plain TCP")
    lines += aead_lines(med)
    lines += wire_lines(samples, drops or {}, path_drops)
    lines.append("Targets (reported, never asserted):")
    lines.append("")
    for t in tgts:
        state = {True: "met", False: "**not met**", None: "not measured"}
        vals = ", ".join(num(v) for v in t["values"])
        lines.append(f"- {t['target']}: {vals} — {state[t['met']]}")
    lines.append("")
    return "\n".join(lines)


COLORS = {"veth": "#9e9e9e", "veth-nooffload": "#616161",
          "wireguard": "#88171a", "ftv": "#1f77b4",
          "ftv-fecoff": "#7fb2d9", "ftv-shapeoff": "#aec7e8",
          "openvpn-tcp": "#ff7f0e", "path-tcp": "#9e9e9e",
          "path-wireguard": "#88171a", "path-ftv": "#1f77b4",
          "path-ftv-fecoff": "#7fb2d9"}


def chart(path, med, meta, configs):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = dict(CONFIGS)
    colors = COLORS
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))

    def bars(ax, tests, metric, labels, title, ylabel, cfgs, log=False):
        cfgs = [c for c in cfgs if any((c, t, metric) in med for t in tests)]
        if not cfgs:
            ax.set_visible(False)
            return
        width = 0.8 / len(cfgs)
        for i, c in enumerate(cfgs):
            xs, ys, lo, hi = [], [], [], []
            for j, t in enumerate(tests):
                m = med.get((c, t, metric))
                if not m:
                    continue
                xs.append(j + (i - (len(cfgs) - 1) / 2) * width)
                ys.append(m["median"])
                lo.append(m["median"] - m["min"])
                hi.append(m["max"] - m["median"])
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2,
                   label=names[c], color=colors.get(c))
            for x, y in zip(xs, ys):
                ax.annotate(fmt(y, metric), (x, y), ha="center",
                            va="bottom", fontsize=6, rotation=90,
                            xytext=(0, 2), textcoords="offset points")
        ax.set_xticks(range(len(tests)))
        ax.set_xticklabels(labels)
        if log:
            ax.set_yscale("log")
            ax.margins(y=0.25)
        ax.set_title(title)
        ax.set_ylabel(ylabel)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)

    tcp = [c for c in configs
           if c not in ("openvpn-tcp", "ftv-fecoff", "ftv-shapeoff")]
    bars(axes[0][0], ["tcp1_fwd", "tcp1_rev", "tcp4_fwd", "tcp4_rev"], "mbps",
         ["1 stream A→B", "1 stream B→A", "4 streams A→B", "4 streams B→A"],
         "TCP throughput (iperf3)", "Mbit/s (log)", tcp, log=True)
    bars(axes[0][1], ["pps"], "kpps", ["64-byte UDP"],
         "64-byte UDP packets received through the device", "kpps", tcp)
    bars(axes[1][0], ["tcp1_fwd", "tcp4_fwd"], "cpu_s_per_gb",
         ["1 stream A→B", "4 streams A→B"],
         "CPU per GB (whole VM, lower is better)", "CPU-s/GB", tcp)

    ax = axes[1][1]
    for c in configs:
        pts = [(i, med[(c, "loss_" + x, "mbps")])
               for i, x in enumerate(LOSSES) if (c, "loss_" + x, "mbps") in med]
        if not pts:
            continue
        ax.errorbar([p[0] for p in pts], [p[1]["median"] for p in pts],
                    yerr=[[p[1]["median"] - p[1]["min"] for p in pts],
                          [p[1]["max"] - p[1]["median"] for p in pts]],
                    marker="o", capsize=2, label=names[c],
                    color=colors.get(c))
    ax.set_xticks(range(len(LOSSES)))
    ax.set_xticklabels([x + " %" for x in LOSSES])
    ax.set_yscale("log")
    ax.set_title("1 TCP stream, 10 ms delay and loss each way")
    ax.set_xlabel("netem loss")
    ax.set_ylabel("Mbit/s (log)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)

    g, h = meta["guest"], meta["host"]
    fig.suptitle(f"make bench, {h.get('date', '')}: Linux {g.get('kernel')}, "
                 f"{g.get('nproc')} vCPUs -cpu {h.get('qemu-cpu')} (software "
                 f"emulation), medians of {g['parameters'].get('repeats')}, "
                 f"bars min–max; host load max {h.get('load1_max')}",
                 fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=90)
    plt.close(fig)


def chart_path(path, med, samples, meta, configs):
    """NAME-path.png: one stream A->B through the router against the
    round trip, a panel per loss of the matrix, one line per path
    configuration; under them, a table of ftv/WireGuard (paired) and
    ftv/plain TCP for every RTT and loss measured."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = dict(CONFIGS)
    units = sorted({s["test"] for s in samples if path_unit(s["test"])},
                   key=path_unit)
    # The matrix's losses: those measured with 4 streams or B->A (the FEC
    # rows are one stream A->B at 100 ms only, a point and not a line).
    losses = sorted({path_unit(t)[1] for t in units
                     if path_unit(t)[2:] != (1, "fwd")}) or sorted(
        {path_unit(t)[1] for t in units})
    if not losses:
        return False
    groups = sorted({path_unit(t)[:2] for t in units})
    # the table's height follows its rows
    table_h = 1.0 + 0.3 * len(groups)
    fig = plt.figure(figsize=(max(6.5 * len(losses), 10), 6.5 + table_h))
    grid = fig.add_gridspec(2, len(losses), height_ratios=(6, table_h))
    for i, loss in enumerate(losses):
        ax = fig.add_subplot(grid[0, i])
        for c in configs:
            pts = sorted((path_unit(t)[0], med[(c, t, "mbps")])
                         for t in units if (c, t, "mbps") in med
                         and path_unit(t)[1:] == (loss, 1, "fwd"))
            if not pts:
                continue
            ax.errorbar([x for x, _ in pts], [m["median"] for _, m in pts],
                        yerr=[[m["median"] - m["min"] for _, m in pts],
                              [m["max"] - m["median"] for _, m in pts]],
                        marker="o", capsize=2, label=names[c],
                        color=COLORS.get(c),
                        linestyle="--" if c == "path-ftv-fecoff" else "-")
            for x, m in pts:
                ax.annotate(fmt(m["median"], "mbps"), (x, m["median"]),
                            fontsize=7, xytext=(4, 2),
                            textcoords="offset points")
        rtts = sorted({path_unit(t)[0] for t in units})
        ax.set_xscale("log")
        ax.set_xticks(rtts)
        ax.set_xticklabels([num_text(x) for x in rtts])
        ax.minorticks_off()
        ax.set_yscale("log")
        ax.set_title(f"1 stream A→B, {num_text(loss)} % loss each way")
        ax.set_xlabel("round trip through the router (ms)")
        ax.set_ylabel("Mbit/s (log)")
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8)

    ax = fig.add_subplot(grid[1, :])
    ax.axis("off")
    kinds = [(1, "fwd", "1 A→B"), (1, "rev", "1 B→A"), (4, "fwd", "4 A→B"),
             (4, "rev", "4 B→A")]
    cols = [f"ftv/WG {k[2]}" for k in kinds] + ["ftv/TCP 1 A→B"]
    body = []
    for rtt, loss in groups:
        row = []
        for streams, d, _ in kinds:
            t = path_test(samples, rtt, loss, streams, d)
            row.append(num(t and paired(samples, t, "mbps", "path-ftv",
                                        "path-wireguard")))
        t = path_test(samples, rtt, loss)
        row.append(num(t and ratio(med, t, "mbps", "path-ftv", "path-tcp")))
        body.append(row)
    tab = ax.table(cellText=body, colLabels=cols, loc="upper center",
                   rowLabels=[f"{num_text(r)} ms, {num_text(x)} %"
                              for r, x in groups], cellLoc="center")
    tab.auto_set_font_size(False)
    tab.set_fontsize(8)
    tab.scale(1, 1.2)
    ax.set_title("ftv via router ÷ WireGuard via router (paired, by streams "
                 "and direction) and ÷ plain TCP via router", fontsize=9)

    g, h = meta["guest"], meta["host"]
    fig.suptitle(f"make bench, path matrix, {h.get('date', '')}: Linux "
                 f"{g.get('kernel')}, {g.get('nproc')} vCPUs -cpu "
                 f"{h.get('qemu-cpu')} (software emulation)\nmedians of "
                 f"{g['parameters'].get('repeats')}, bars min–max; A — R — "
                 "B, offloads on, netem on R's two veths", fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return True


def print_ratios(rats, tgts):
    width = max([42] + [len(rt["label"] + rt["unit"]) + 3 for rt in rats
                        if rt["ftv/wireguard"] is not None
                        or rt["ftv/veth"] is not None])
    print()
    print(f"{'ratios of the medians':<{width}} {'ftv/WireGuard':>14} "
          f"{'ftv/veth':>9} {'(paired)':>9}")
    for rt in rats:
        if rt["ftv/wireguard"] is None and rt["ftv/veth"] is None:
            continue
        print(f"{rt['label'] + ' (' + rt['unit'] + ')':<{width}} "
              f"{num(rt['ftv/wireguard']):>14} {num(rt['ftv/veth']):>9} "
              f"{num(rt['ftv/wireguard paired']):>9}")
    print("(paired: the median over the repeats of ftv/WireGuard measured "
          "in the same repeat; in the path rows, through the router, with "
          "plain TCP as veth)")
    print()
    print("targets (reported, not asserted):")
    for t in tgts:
        state = {True: "met", False: "NOT MET", None: "not measured"}
        print(f"  {t['target']}: "
              f"{', '.join(num(v) for v in t['values'])} -> {state[t['met']]}")


def report(outdir, resdir, name):
    samples = load_samples(outdir)
    med = medians(samples)
    meta = {"guest": guest_meta(outdir), "host": host_meta(outdir)}
    present = {s["config"] for s in samples}
    configs = [c for c, _ in CONFIGS if c in present]
    rows = ROWS + path_rows(samples)
    rats = ratios(med, samples, rows)
    tgts = targets(med, samples)
    w = wire(samples)
    if w:
        v = [sum(x["out_of_order"] + x["retransmissions"] for x in w.values())]
        tgts.append({"target": "no outer segment out of order or "
                     "retransmitted in the captures (count)", "values": v,
                     "met": v[0] == 0})

    os.makedirs(resdir, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    base = os.path.join(resdir, name)
    drops = ftv_drops(outdir)
    path_drops = ftv_drops(outdir, "path-ftv-")
    if drops or path_drops:
        v = [sum(d.get("replay", 0) for d in drops.values())
             + sum(d.get("replay", 0) for d in path_drops.values())]
        tgts.append({"target": "no replay drops during the bench (count; "
                     "ftv and ftv via router)",
                     "values": v, "met": v[0] == 0})
    md = markdown(med, meta, rows, rats, tgts, configs, samples, drops,
                  path_drops, name)
    with open(base + ".md", "w") as f:
        f.write(md)
    data = {
        "meta": meta,
        "medians": [{"config": c, "test": t, "metric": m, **v}
                    for (c, t, m), v in sorted(med.items())],
        "ratios": rats,
        "targets": tgts,
        "ftv_drops": drops,
        "path_ftv_drops": path_drops,
        "samples": samples,
    }
    with open(base + ".json", "w") as f:
        json.dump(data, f, indent=1, sort_keys=True)
        f.write("\n")
    # A chart only of what ran: a path-only run has no short-path chart,
    # and a stale one of an earlier run under this name must not stay.
    short = [c for c in configs if c not in PATH_CONFIGS]
    longp = [c for c in configs if c in PATH_CONFIGS]
    written = []
    try:
        if short:
            chart(base + ".png", med, meta, short)
            written.append(".png")
        if longp and chart_path(base + "-path.png", med, samples, meta,
                                longp):
            written.append("-path.png")
    except ImportError as e:
        print(f"report: no chart ({e}); install python3-matplotlib",
              file=sys.stderr)
    for ext in (".png", "-path.png"):
        if ext not in written and os.path.exists(base + ext):
            os.remove(base + ext)
    for ext in [".md", ".json"] + written:
        if os.path.exists(base + ext):
            shutil.copyfile(base + ext,
                            os.path.join(resdir, f"{stamp}-{name}{ext}"))
    print(md)
    print_ratios(rats, tgts)
    print()
    print(f"report: {base}.md, .json{', ' if written else ''}"
          f"{', '.join(written)} (and copies named {stamp}-{name})")
    return 0 if samples else 1


def main(argv):
    if len(argv) == 3 and argv[1] == "summary":
        print(summary(argv[2]))
        return 0
    if len(argv) == 5 and argv[1] == "report":
        return report(argv[2], argv[3], argv[4])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
