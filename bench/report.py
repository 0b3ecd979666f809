#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Figures, table and chart from what bench/guest.sh recorded.

    bench/report.py report OUTDIR RESULTS-DIR NAME
        reads OUTDIR/samples.jsonl, OUTDIR/logs/*.json (iperf3 -J),
        OUTDIR/guest/ and OUTDIR/host/; writes RESULTS-DIR/NAME.md,
        NAME.json (medians, ratios and every raw sample), NAME.png,
        NAME-path.png (the path matrix, when measured), NAME-flows.png
        (the flows test, when measured) and timestamped copies; prints
        the table and the ratios.
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
              traffic flowed (pps and pps256 tests)
  rtt_ms      median of 30 idle pings through the tunnel (rtt test)
  mb_s        MB (10^6 bytes) per second tcrypt sealed on one CPU (aead)
  mb_s_open   the same, opened (aead)
  overhead    repair messages as a % of all the packets the sending ftv
              sent (loss and path tests)
  frac        kept: a run's throughput over the same configuration's
              lossless one in the same repeat (loss and path tests)
The path test (units path_RTT_LOSS_pSTREAMS_DIR) runs through a router
namespace with netem on both its veths and every offload at its default;
its rows have a table of their own, with ftv/WireGuard meaning
path-ftv/path-wireguard and ftv/veth meaning path-ftv/path-tcp.
The flows test (units flows_KIND_pSTREAMS_DIR, KIND clean or police)
runs path-ftv (one connection) and path-ftv4 (flows 4) through the same
router at 40 ms, clean and with a per-connection policer of P Mbit/s;
its table has flows 4 / flows 1, flows 4 / 4P and flows 1 / P, and per
run:
  retx_pct    the sender's inner TCP retransmits (iperf3's
              end.sum_sent.retransmits) per segment it sent (its
              end.sum_sent.bytes / 1448), in %
  rotations_during  A's connections replaced after stalling during the
              run (ftvctl show's rotations, after less before; none when
              the module or ftvctl has no such counter)
Against a censor, path-ftv4 alone (flows 4), each unit on a tunnel made
anew: flows_hole_pSTREAMS_DIR (R black-holes one of A's connections at
40 % of the run) and flows_freeze_ROTATE (R freezes every connection
once 16 KB went towards A; rotate auto after flows_freeze_auto_learning,
or a budget such as 12k), with what guest.sh saw beside each run in a
line extra_UNIT merged into it; per run:
  before_mbps, lowest_mbps  the median of iperf3's 1-s windows (two
              0.5-s intervals, the client's: the receiver's B->A, the
              sender's A->B) that ended before the hole, and the lowest
              of those that ended after it; lowest_ratio, their quotient
  up_again_s  from the hole until A had four connections up again with
              one more replaced (polled every 0.2 s; none if not within
              10 s)
  ping_loss_pct, gap_s  of the pings every 0.1 s beside a measured
              download through the freeze: lost, and the longest run
              unanswered x 0.1 s
  freeze_drops, crossed  segments the freeze dropped during it, and the
              connections in R's conntrack past 16 KB towards A after it
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
    ("path-ftv4", "ftv, 4 flows via router"),
]
PATH_CONFIGS = ("path-tcp", "path-wireguard", "path-ftv", "path-ftv-fecoff",
                "path-ftv4")
# path_RTT_LOSS_pSTREAMS_DIR, as bench/guest.sh names the path units, and
# path_kept_RTT_LOSS, the derived kept fractions
PATH_UNIT = re.compile(r"path_([0-9.]+)_([0-9.]+)_p([0-9]+)_(fwd|rev)$")
PATH_KEPT = re.compile(r"path_kept_([0-9.]+)_([0-9.]+)$")
# The round trip of the kept fractions and of the FEC rows.
FEC_RTT = 100.0
# flows_KIND_pSTREAMS_DIR, as bench/guest.sh names the flows units; the
# two configurations they compare (one connection, and flows N); the
# size of a segment for counting them from bytes; the acceptance levels
FLOWS_UNIT = re.compile(r"flows_(clean|police)_p([0-9]+)_(fwd|rev)$")
FLOWS_ONE, FLOWS_MANY = "path-ftv", "path-ftv4"
MSS = 1448
FLOWS_CLEAN_MIN = 0.95      # clean: flows N / flows 1
FLOWS_RETX_MAX = 0.5        # clean: flows N's inner retransmits, % of segments
FLOWS_POLICE_MIN = 0.8      # policed: flows N / (N x P)
# flows_hole_pSTREAMS_DIR and flows_freeze_ROTATE (and the learning run
# before flows_freeze_auto), the flows units against a censor, run by
# FLOWS_MANY alone; what they are held to
HOLE_UNIT = re.compile(r"flows_hole_p([0-9]+)_(fwd|rev)$")
FREEZE_UNIT = re.compile(r"flows_freeze_(auto|off|[0-9]+[kmg]?)(_learning)?$")
HOLE_KEPT_MIN = 0.5         # lowest 1-s window after the hole / before
HOLE_UP_MAX = 10.0          # s from the hole to every connection up again
HOLE_UP_AIM = 1.0
FREEZE_MBPS_MIN = 1.0       # the download through the freeze
FREEZE_LOSS_MAX = 2.0       # the pings beside it: lost, %
FREEZE_GAP_MAX = 1.0        # and the longest run unanswered, s
LOSSES = ["0", "0.1", "0.5", "1", "5"]

# (test, metric, label, unit)
ROWS = [
    ("tcp1_fwd", "mbps", "1 TCP stream A→B", "Mbit/s"),
    ("tcp1_rev", "mbps", "1 TCP stream B→A", "Mbit/s"),
    ("tcp4_fwd", "mbps", "4 TCP streams A→B", "Mbit/s"),
    ("tcp4_rev", "mbps", "4 TCP streams B→A", "Mbit/s"),
    ("pps", "kpps", "64-byte UDP received", "kpps"),
    ("pps256", "kpps", "256-byte UDP received", "kpps"),
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
                j = load_json(os.path.join(outdir, s["iperf"]))
                s.update(iperf_figures(j))
                if FLOWS_UNIT.match(s["test"]):
                    s.update(flows_figures(j, s.get("retransmits")))
                if HOLE_UNIT.match(s["test"]):
                    s["intervals"] = iperf_intervals(j)
            s.update(series_figures(s.get("series")))
            if s["test"] not in ("pps", "pps256"):
                s.pop("kpps", None)
            if s["test"] == "aead" and s.get("bytes") and s.get("seconds"):
                s["mb_s"] = s["bytes"] / s["seconds"] / 1e6
            if (s["test"] == "aead" and s.get("open_bytes")
                    and s.get("open_seconds")):
                s["mb_s_open"] = s["open_bytes"] / s["open_seconds"] / 1e6
            if (s["test"].startswith(("fec_loss_", "fec_path_"))
                    and s.get("packets")):
                s["test"] = s["test"][4:]
                s["overhead"] = 100.0 * s["repairs"] / s["packets"]
            samples.append(s)
    samples = merge_rotations(samples)
    samples = merge_extras(samples)
    for s in samples:
        s.update(censor_figures(s))
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


def flows_figures(j, retransmits):
    """What the sender sent in a flows run (iperf3's end.sum_sent) and
    its retransmits per segment, in %."""
    sent = ((j or {}).get("end") or {}).get("sum_sent") or {}
    fig = {}
    if sent.get("bytes"):
        fig["sent_bytes"] = sent["bytes"]
        if retransmits is not None:
            fig["retx_pct"] = 100.0 * retransmits / (sent["bytes"] / MSS)
    return fig


def merge_lines(samples, prefix, is_run, figures):
    """Each PREFIX + UNIT line (what guest.sh saw beside a run) into its
    run's sample (those is_run(test) picks), as figures(line) gives it; a
    line whose run is missing stays, named UNIT."""
    runs = {(s["repeat"], s["config"], s["test"]): s for s in samples
            if is_run(s["test"])}
    out = []
    for s in samples:
        if not s["test"].startswith(prefix):
            out.append(s)
            continue
        unit = s["test"][len(prefix):]
        fig = figures(s)
        run = runs.get((s["repeat"], s["config"], unit))
        if run is not None:
            run.update(fig)
        else:
            out.append({"repeat": s["repeat"], "config": s["config"],
                        "test": unit, "rc": s.get("rc", 0), **fig})
    return out


def rotation_figures(s):
    """A's rotations and flows_up before and after a flows run, and
    rotations_during."""
    fig = {k: s.get(k) for k in ("rotations_before", "rotations",
                                 "flows_up_before", "flows_up")}
    if (isinstance(fig["rotations"], int)
            and isinstance(fig["rotations_before"], int)):
        fig["rotations_during"] = fig["rotations"] - fig["rotations_before"]
    return fig


def merge_rotations(samples):
    """Each rotations_flows_UNIT line into its run's sample."""
    return merge_lines(samples, "rotations_",
                       lambda t: bool(FLOWS_UNIT.match(t))
                       and not t.startswith("rotations_"),
                       rotation_figures)


def merge_extras(samples):
    """Each extra_UNIT line (what guest.sh saw beside a run against a
    censor) into its run's sample."""
    return merge_lines(samples, "extra_",
                       lambda t: bool(HOLE_UNIT.match(t)
                                      or FREEZE_UNIT.match(t)),
                       lambda s: {k: v for k, v in s.items()
                                  if k not in ("repeat", "config", "test",
                                               "rc")})


def iperf_intervals(j):
    """[start, end, bytes] of each of iperf3's intervals not omitted: the
    client's, the receiver's with -R and the sender's without."""
    out = []
    for iv in (j or {}).get("intervals") or []:
        s = iv.get("sum") or {}
        if s.get("omitted"):
            continue
        if all(isinstance(s.get(k), (int, float))
               for k in ("start", "end", "bytes")):
            out.append([s["start"], s["end"], s["bytes"]])
    return out


def second_windows(intervals):
    """(start, end, Mbit/s) of every run of consecutive intervals that
    lasts a second (within 5 %): with 0.5-s intervals, a 1-s window every
    half second. A short last interval makes none."""
    out = []
    for i in range(len(intervals)):
        nbytes = 0
        for k in range(i, len(intervals)):
            nbytes += intervals[k][2]
            d = intervals[k][1] - intervals[i][0]
            if d >= 0.95:
                if d <= 1.05:
                    out.append((intervals[i][0], intervals[k][1],
                                nbytes * 8 / d / 1e6))
                break
    return out


def censor_figures(s):
    """A hole run's rate before the hole, lowest 1-s window after it and
    their ratio; a freeze run's pings lost, in %."""
    fig = {}
    if HOLE_UNIT.match(s["test"]):
        at = s.get("hole_at_s")
        wins = second_windows(s.get("intervals") or [])
        if not isinstance(at, (int, float)) or not wins:
            return fig
        before = [m for _, e, m in wins if e <= at]
        after = [m for _, e, m in wins if e > at]
        if before:
            fig["before_mbps"] = statistics.median(before)
        if after:
            fig["lowest_mbps"] = min(after)
        if before and after and fig["before_mbps"] > 0:
            fig["lowest_ratio"] = fig["lowest_mbps"] / fig["before_mbps"]
    elif FREEZE_UNIT.match(s["test"]):
        sent, got = s.get("ping_sent"), s.get("ping_received")
        if isinstance(sent, int) and sent > 0 and isinstance(got, int):
            fig["ping_loss_pct"] = 100.0 * (sent - got) / sent
    return fig


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
    for d, way in (("fwd", "A→B"), ("rev", "B→A")):
        t = f"path_jitter_p1_{d}"
        if t in tests:
            jitter = next((s.get("jitter") for s in samples
                           if s["test"] == t and s.get("jitter")), "?")
            rows.append((t, "mbps", f"path with jitter ({jitter} each "
                         f"way, no loss), 1 stream {way}", "Mbit/s"))
            rows.append((t, "overhead", f"repair messages with jitter, "
                         f"1 stream {way}", "% of data"))
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
                       "retransmits", "rtt_ms", "mb_s", "mb_s_open",
                       "overhead",
                       "seconds", "kb_per_peer", "ok", "retx_pct",
                       "rotations_during"):
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
        # PREFIX-A-rREPEAT.json, and PREFIX-A-rREPEAT-UNIT.json, the
        # tunnel a unit against a censor made anew, as it was before
        rep = name.rsplit("-r", 1)[-1][:-5].split("-", 1)[0]
        tot = out.setdefault(rep, {})
        for dev in j.values():
            for peer in dev.get("peers", []):
                for k, v in peer.get("drops", {}).items():
                    tot[k] = tot.get(k, 0) + v
    return out


def flows_unit(test):
    """(kind, streams, direction) of a flows unit, or None."""
    m = FLOWS_UNIT.match(test)
    if not m:
        return None
    return m.group(1), int(m.group(2)), m.group(3)


def flows_param(samples, test, key, config=None):
    """The value of KEY (rtt_ms, police_mbit, flows) that TEST's runs
    recorded (the smallest, if they differ), or None."""
    vals = sorted(s[key] for s in samples
                  if s["test"] == test and (config is None
                                            or s["config"] == config)
                  and isinstance(s.get(key), (int, float)))
    return vals[0] if vals else None


def flows_rows(med, samples):
    """The flows table's rows, for the units measured, clean before
    policed: throughput with one connection and with flows N, the ratios
    the acceptance levels apply to, the inner retransmits per segment
    (medians) and the connections A replaced (all repeats summed)."""
    kinds = {"clean": 0, "police": 1}
    tests = sorted({s["test"] for s in samples if flows_unit(s["test"])},
                   key=lambda t: (kinds[flows_unit(t)[0]], flows_unit(t)[1:]))

    def median(cfg, test, metric):
        m = med.get((cfg, test, metric))
        return m["median"] if m else None

    def replaced(cfg, test):
        v = [s["rotations_during"] for s in samples
             if s["config"] == cfg and s["test"] == test
             and s.get("rotations_during") is not None]
        return sum(v) if v else None

    rows = []
    for t in tests:
        kind, streams, d = flows_unit(t)
        n = flows_param(samples, t, "flows", FLOWS_MANY) or 4
        police = flows_param(samples, t, "police_mbit") if kind == "police" \
            else None
        rtt = flows_param(samples, t, "rtt_ms")
        one = median(FLOWS_ONE, t, "mbps")
        many = median(FLOWS_MANY, t, "mbps")
        way = "A→B" if d == "fwd" else "B→A"
        label = f"{streams} stream{'s' if streams > 1 else ''} {way}, " + (
            f"policed at {num_text(police) if police else 'P'} Mbit/s per "
            "connection"
            if kind == "police" else "clean")
        row = {"test": t, "label": label, "kind": kind, "rtt_ms": rtt,
               "police_mbit": police, "flows": n,
               "one": med.get((FLOWS_ONE, t, "mbps")),
               "many": med.get((FLOWS_MANY, t, "mbps")),
               "many/one": None, "many/(flows*P)": None, "one/P": None,
               "retx_pct_one": median(FLOWS_ONE, t, "retx_pct"),
               "retx_pct_many": median(FLOWS_MANY, t, "retx_pct"),
               "rotations_one": replaced(FLOWS_ONE, t),
               "rotations_many": replaced(FLOWS_MANY, t)}
        if kind == "clean":
            row["many/one"] = ratio(med, t, "mbps", FLOWS_MANY, FLOWS_ONE)
        elif police:
            row["many/(flows*P)"] = many / (n * police) if many is not None \
                else None
            row["one/P"] = one / police if one is not None else None
        rows.append(row)
    return rows


def flows_targets(rows):
    """The flows test's acceptance levels, as targets (none without the
    test)."""
    if not rows:
        return []

    def pick(kind, key):
        return [r[key] for r in rows if r["kind"] == kind]

    def all_ok(vals, ok):
        if not vals or any(v is None for v in vals):
            return None
        return all(ok(v) for v in vals)

    n = rows[0]["flows"]
    rtt = num_text(rows[0]["rtt_ms"]) if rows[0]["rtt_ms"] else "?"
    police = sorted({r["police_mbit"] for r in rows
                     if r["police_mbit"] is not None})
    p = "/".join(num_text(x) for x in police) or "P"
    t = []
    v = pick("clean", "many/one")
    t.append((f"flows, clean {rtt} ms path: flows {n} ≥ "
              f"{FLOWS_CLEAN_MIN:.2f} × flows 1 (1 stream each way)", v,
              all_ok(v, lambda x: x >= FLOWS_CLEAN_MIN)))
    v = pick("clean", "retx_pct_many")
    t.append((f"flows, clean {rtt} ms path: flows {n}'s inner TCP "
              f"retransmits ≤ {FLOWS_RETX_MAX} % of its segments (each "
              "way, %)", v, all_ok(v, lambda x: x <= FLOWS_RETX_MAX)))
    v = pick("police", "many/(flows*P)")
    t.append((f"flows, policed at {p} Mbit/s per connection: flows {n} ≥ "
              f"{FLOWS_POLICE_MIN} × {n} × P (each way)", v,
              all_ok(v, lambda x: x >= FLOWS_POLICE_MIN)))
    return [{"target": name, "values": vals, "met": met}
            for name, vals, met in t]


def flows_lines(med, rows, drops, name="NAME"):
    """The flows section of the Markdown report (nothing without the
    test)."""
    if not rows:
        return []
    names = dict(CONFIGS)
    n = rows[0]["flows"]
    rtt = num_text(rows[0]["rtt_ms"]) if rows[0]["rtt_ms"] else "?"
    police = sorted({r["police_mbit"] for r in rows
                     if r["police_mbit"] is not None})
    p = "/".join(num_text(x) for x in police) or "P"
    lines = ["## One session over several connections (flows)", ""]
    lines.append(f"{names[FLOWS_ONE]} (one connection) and "
                 f"{names[FLOWS_MANY]} (`flows {n}` on A's peer), "
                 f"through the router at {rtt} ms without loss: clean, and "
                 f"policed as a censor does, R dropping what exceeds P = "
                 f"{p} Mbit/s on each TCP connection, each way (nftables, "
                 "a dynamic set keyed by the 4-tuple; nft's Mbit of 2^20 "
                 "bits, outer headers included). Inner retransmits: the "
                 "sender's, per segment it sent (bytes ÷ "
                 f"{MSS}), median; connections replaced: A's rotations "
                 "during the runs, every repeat summed (– where the module "
                 f"does not count them). Chart: {name}-flows.png.")
    lines.append("")
    head = ["test", f"{names[FLOWS_ONE]} (Mbit/s)",
            f"{names[FLOWS_MANY]} (Mbit/s)", f"flows {n} ÷ flows 1",
            f"flows {n} ÷ {n}P", "flows 1 ÷ P",
            f"inner retransmits, flows 1 / {n} (% of segments)",
            f"connections replaced, flows 1 / {n}"]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        cells = [r["label"], cell(med, FLOWS_ONE, r["test"], "mbps"),
                 cell(med, FLOWS_MANY, r["test"], "mbps"),
                 num(r["many/one"]), num(r["many/(flows*P)"]),
                 num(r["one/P"]),
                 f"{num(r['retx_pct_one'])} / {num(r['retx_pct_many'])}",
                 f"{num(r['rotations_one'])} / {num(r['rotations_many'])}"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Acceptance (under Targets): clean, flows {n} ≥ "
                 f"{FLOWS_CLEAN_MIN:.2f} × flows 1 and its inner "
                 f"retransmits ≤ {FLOWS_RETX_MAX} % of segments; policed, "
                 f"flows {n} ≥ {FLOWS_POLICE_MIN} × {n}P. flows 1 ÷ P "
                 "shows what one connection keeps of its policer.")
    lines.append("")
    for rep, d in sorted((drops or {}).items()):
        nz = ", ".join(f"{k} {v}" for k, v in sorted(d.items()) if v)
        lines.append(f"- {names[FLOWS_MANY]}: drop counters after repeat "
                     f"{rep}, both ends: {nz or 'all zero'}")
    return lines + ([""] if drops else [])


def all_met(vals, ok):
    """Whether every value meets OK; None if one is missing (or none)."""
    if not vals or any(v is None for v in vals):
        return None
    return all(ok(v) for v in vals)


def censor_rows(med, samples):
    """The rows of the units against a censor (FLOWS_MANY's), for those
    measured: the black hole's each way (the rate before, the lowest 1-s
    window after and their ratio, the time to every connection up again:
    medians and the worst repeat), then the freeze's by rotate setting,
    rotate auto's learning first (the download, the pings beside it and
    what the freeze dropped: medians, and the worst repeat of what must
    be nothing)."""
    cfg = FLOWS_MANY
    runs = {}
    for s in samples:
        if s["config"] == cfg and (HOLE_UNIT.match(s["test"])
                                   or FREEZE_UNIT.match(s["test"])):
            runs.setdefault(s["test"], []).append(s)

    def vals(test, key):
        return [s[key] for s in runs.get(test, ())
                if isinstance(s.get(key), (int, float))]

    def median(test, key):
        v = vals(test, key)
        return statistics.median(v) if v else None

    def worst(test, key, low=False):
        v = vals(test, key)
        return (min(v) if low else max(v)) if v else None

    def param(test, key):
        v = sorted(s[key] for s in runs.get(test, ())
                   if isinstance(s.get(key), (int, float)))
        return v[0] if v else None

    rows = []
    holes = sorted((t for t in runs if HOLE_UNIT.match(t)),
                   key=lambda t: HOLE_UNIT.match(t).groups())
    for t in holes:
        streams, d = HOLE_UNIT.match(t).groups()
        streams = int(streams)
        n = param(t, "flows") or 4
        made = [s for s in runs[t] if isinstance(s.get("hole_at_s"),
                                                  (int, float))]
        # a hole whose connections were not up again within HOLE_UP_MAX
        # counts as the longest wait
        ups = sorted(s["up_again_s"]
                     if isinstance(s.get("up_again_s"), (int, float))
                     else float("inf") for s in made)
        up_med = statistics.median(ups) if ups else None
        way = "A→B" if d == "fwd" else "B→A"
        rows.append({
            "test": t, "kind": "hole", "flows": n,
            "label": f"{streams} stream{'s' if streams > 1 else ''} {way}, "
                     f"one of {n} connections black-holed",
            "rtt_ms": param(t, "rtt_ms"), "seconds": param(t, "seconds"),
            "runs": len(runs[t]), "holes": len(made),
            "hole_at_s": median(t, "hole_at_s"),
            "before_mbps": median(t, "before_mbps"),
            "lowest_mbps": median(t, "lowest_mbps"),
            "lowest_mbps_worst": worst(t, "lowest_mbps", low=True),
            "lowest_ratio": median(t, "lowest_ratio"),
            "lowest_ratio_worst": worst(t, "lowest_ratio", low=True),
            "up_again_s": None if up_med in (None, float("inf")) else up_med,
            "up_again_s_worst": (None if not ups or ups[-1] == float("inf")
                                 else ups[-1]),
            "not_up_again": sum(1 for x in ups if x == float("inf")),
            "hole_drops": median(t, "hole_drops"),
            "rotations": median(t, "rotations")})

    def rotate_key(t):
        rot, learning = FREEZE_UNIT.match(t).groups()
        return (rot != "auto", rot != "off", rot, learning is None)

    for t in sorted((t for t in runs if FREEZE_UNIT.match(t)),
                    key=rotate_key):
        rot, learning = FREEZE_UNIT.match(t).groups()
        main = t[:-len(learning)] if learning else t
        secs = param(t, "seconds")
        label = f"rotate {rot}" + (
            f", learning ({num_text(secs) if secs else '?'} s of download)"
            if learning else ", after learning" if rot == "auto" else "")
        row = {"test": t, "kind": "freeze", "rotate": rot,
               "learning": bool(learning), "label": label,
               "flows": param(t, "flows") or 4, "rtt_ms": param(t, "rtt_ms"),
               "seconds": secs, "freeze_bytes": param(t, "freeze_bytes"),
               "runs": len(runs[t]), "mbps": median(t, "mbps"),
               "ping_sent": None, "ping_received": None,
               "ping_loss_pct": None, "ping_loss_pct_worst": None,
               "gap_s": None, "gap_s_worst": None,
               "crossed": None, "crossed_worst": None}
        if learning:
            row.update(freeze_drops=median(main, "learning_drops"),
                       freeze_drops_worst=worst(main, "learning_drops"),
                       rotations=median(main, "learning_rotations"))
        else:
            row.update(
                ping_sent=median(t, "ping_sent"),
                ping_received=median(t, "ping_received"),
                ping_loss_pct=median(t, "ping_loss_pct"),
                ping_loss_pct_worst=worst(t, "ping_loss_pct"),
                gap_s=median(t, "gap_s"), gap_s_worst=worst(t, "gap_s"),
                freeze_drops=median(t, "freeze_drops"),
                freeze_drops_worst=worst(t, "freeze_drops"),
                crossed=median(t, "crossed"),
                crossed_worst=worst(t, "crossed"),
                rotations=median(t, "rotations"))
        rows.append(row)
    return rows


def freeze_kb(rows):
    """The freeze's threshold in KB, as text ("16")."""
    v = sorted({r["freeze_bytes"] for r in rows
                if r.get("freeze_bytes") is not None})
    return "/".join(num_text(x / 1024) for x in v) or "?"


def censor_targets(rows):
    """The acceptance levels of the units against a censor, as targets
    (none for the units not measured)."""
    t = []
    holes = [r for r in rows if r["kind"] == "hole"]
    if holes:
        n = holes[0]["flows"]
        v = [r["lowest_ratio_worst"] for r in holes]
        t.append((f"flows {n}, one connection black-holed: the lowest 1-s "
                  f"window after ≥ {HOLE_KEPT_MIN} × the rate before (worst "
                  "repeat, each way)", v,
                  all_met(v, lambda x: x >= HOLE_KEPT_MIN)))
        v = [r["up_again_s_worst"] for r in holes]
        met = None if any(not r["holes"] for r in holes) else all(
            not r["not_up_again"] and r["up_again_s_worst"] <= HOLE_UP_MAX
            for r in holes)
        t.append((f"flows {n}, one connection black-holed: {n} up again, "
                  f"one more replaced, within {num_text(HOLE_UP_MAX)} s, aim "
                  f"{num_text(HOLE_UP_AIM)} s (worst repeat, each way, s; – "
                  f"when not within {num_text(HOLE_UP_MAX)} s)", v, met))
    frz = [r for r in rows if r["kind"] == "freeze" and not r["learning"]]
    if frz:
        n = frz[0]["flows"]
        kb = freeze_kb(frz)
        which = ", ".join(f"rotate {r['rotate']}" for r in frz)
        v = [r["mbps"] for r in frz]
        t.append((f"flows {n}, every connection frozen after {kb} KB towards "
                  f"the client ({which}; auto once it has learned): download "
                  f"≥ {num_text(FREEZE_MBPS_MIN)} Mbit/s (medians)", v,
                  all_met(v, lambda x: x >= FREEZE_MBPS_MIN)))
        v = [r["ping_loss_pct"] for r in frz]
        t.append((f"flows {n}, frozen after {kb} KB ({which}): pings every "
                  f"0.1 s beside the download lose ≤ {num_text(FREEZE_LOSS_MAX)}"
                  " % (medians, %)", v,
                  all_met(v, lambda x: x <= FREEZE_LOSS_MAX)))
        v = [r["gap_s"] for r in frz]
        t.append((f"flows {n}, frozen after {kb} KB ({which}): no gap in "
                  f"those pings over {num_text(FREEZE_GAP_MAX)} s (medians "
                  "of the longest, s)", v,
                  all_met(v, lambda x: x <= FREEZE_GAP_MAX)))
        for r in frz:
            if r["rotate"] in ("auto", "off"):
                continue
            v = [r["crossed_worst"], r["freeze_drops_worst"]]
            t.append((f"flows {n}, frozen after {kb} KB, rotate "
                      f"{r['rotate']}: no connection past {kb} KB towards the "
                      "client, no segment frozen (worst repeat: connections, "
                      "segments)", v, all_met(v, lambda x: x == 0)))
    return [{"target": name, "values": vals, "met": met}
            for name, vals, met in t]


def censor_lines(rows, drops=None):
    """The section of the units against a censor (nothing without them);
    DROPS, path-ftv4's drop counters, when no flows table has them."""
    if not rows:
        return []
    names = dict(CONFIGS)
    n = rows[0]["flows"]
    rtt = next((r["rtt_ms"] for r in rows if r["rtt_ms"]), None)
    rtt = num_text(rtt) if rtt else "?"
    lines = [f"## Against a censor (flows {n})", ""]
    lines.append(f"{names[FLOWS_MANY]} (`flows {n}` on A's peer) through the "
                 f"router at {rtt} ms without loss, each unit on a tunnel "
                 "made anew (both peers removed and added again, R's "
                 "conntrack flushed). Cells: medians over the repeats, and "
                 "the worst repeat after the /; connections replaced: A's "
                 "rotations since the tunnel was made anew.")
    lines.append("")
    holes = [r for r in rows if r["kind"] == "hole"]
    if holes:
        secs = holes[0]["seconds"]
        at = holes[0]["hole_at_s"]
        lines.append(
            f"Black hole: one stream for {num_text(secs) if secs else '?'} s "
            "(iperf3, 0.5-s intervals, nothing omitted); at "
            f"{f'{at:.1f}' if at is not None else '?'} s (40 %) R drops "
            f"both ways of one of A's {n} connections, a join (never the "
            "opener, whose loss takes a new session), until the run ends. "
            "Before: the median of the 1-s windows that ended before the "
            "hole; lowest after: the lowest of those that ended after it "
            "(A→B these are what the sender wrote, B→A what the receiver "
            "read); up again: from the hole until A's show --json said "
            f"{n} connections up and one more replaced (polled every "
            f"0.2 s; > {num_text(HOLE_UP_MAX)}: not within "
            f"{num_text(HOLE_UP_MAX)} s).")
        lines.append("")
        head = ["test", "rate before (Mbit/s)",
                "lowest 1-s window after (Mbit/s)", "lowest ÷ before",
                f"{n} up again after (s)", "connections replaced",
                "segments the hole dropped"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

        def up(v, r):
            if v is None and r["holes"] and r["not_up_again"]:
                return f"> {num_text(HOLE_UP_MAX)}"
            return num(v, 1)

        for r in holes:
            worst_up = (None if r["not_up_again"] else
                        r["up_again_s_worst"])
            cells = [r["label"], fmt(r["before_mbps"], "mbps"),
                     f"{fmt(r['lowest_mbps'], 'mbps')} / "
                     f"{fmt(r['lowest_mbps_worst'], 'mbps')}",
                     f"{num(r['lowest_ratio'])} / "
                     f"{num(r['lowest_ratio_worst'])}",
                     f"{up(r['up_again_s'], r)} / {up(worst_up, r)}",
                     num(r["rotations"], 0), num(r["hole_drops"], 0)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    frz = [r for r in rows if r["kind"] == "freeze"]
    if frz:
        kb = freeze_kb(frz)
        secs = next((r["seconds"] for r in frz
                     if not r["learning"] and r["seconds"]), None)
        lines.append(
            f"Freeze: R drops what B sends on any connection whose reply "
            f"direction (towards A, the client) carried more than {kb} KB, "
            "by conntrack's count, as a censor that freezes connections "
            "does. rotate auto first learns from a download of its own "
            "(its row), a budget such as 12k does not; then iperf3 -R "
            f"for {num_text(secs) if secs else '?'} s, nothing omitted, "
            "with a ping from A to B's tunnel address every 0.1 s beside "
            "it. Longest gap: the longest run of pings unanswered × 0.1 s; "
            f"past {kb} KB: the connections in R's conntrack whose reply "
            "direction carried more, after the run.")
        lines.append("")
        head = ["test", "download (Mbit/s)", "pings answered of sent",
                "ping loss (%)", "longest ping gap (s)",
                "segments frozen (dropped)",
                f"connections past {kb} KB", "connections replaced"]
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        for r in frz:
            def pair(a, b, digits=2):
                return "–" if a is None else f"{num(a, digits)} / {num(b, digits)}"

            cells = [r["label"], fmt(r["mbps"], "mbps"),
                     "–" if r["ping_sent"] is None else
                     f"{num(r['ping_received'], 0)} of "
                     f"{num(r['ping_sent'], 0)}",
                     pair(r["ping_loss_pct"], r["ping_loss_pct_worst"], 1),
                     pair(r["gap_s"], r["gap_s_worst"], 1),
                     pair(r["freeze_drops"], r["freeze_drops_worst"], 0),
                     pair(r["crossed"], r["crossed_worst"], 0),
                     num(r["rotations"], 0)]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    lines.append(f"Acceptance (under Targets): black hole, no 1-s window "
                 f"below {HOLE_KEPT_MIN} × the rate before and {n} "
                 f"connections up again within {num_text(HOLE_UP_MAX)} s "
                 f"(aim {num_text(HOLE_UP_AIM)} s), every repeat; freeze, "
                 f"≥ {num_text(FREEZE_MBPS_MIN)} Mbit/s down, ≤ "
                 f"{num_text(FREEZE_LOSS_MAX)} % of the pings lost and no "
                 f"gap over {num_text(FREEZE_GAP_MAX)} s, and with a budget "
                 f"no connection past the freeze and nothing frozen.")
    lines.append("")
    for rep, d in sorted((drops or {}).items()):
        nz = ", ".join(f"{k} {v}" for k, v in sorted(d.items()) if v)
        lines.append(f"- {names[FLOWS_MANY]}: drop counters after repeat "
                     f"{rep}, both ends: {nz or 'all zero'}")
    return lines + ([""] if drops else [])


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
    v = [paired(samples, f"path_jitter_p1_{d}", "mbps", "path-ftv",
                "path-wireguard") for d in ("fwd", "rev")]
    t.append(("a path that reorders (jitter, no loss): ftv ≥ WireGuard "
              "(paired, 1 stream each way)", v, both(v, lambda x: x >= 1)))
    return t


def aead_ceiling_mbit(med):
    """What the AEAD lets one stream carry on two CPUs, in Mbit/s: each
    byte sealed once and opened once, 2 / (1/seal + 1/open); the sealing
    rate alone for results without an opening figure."""
    seal = med.get(("aead", "aead", "mb_s"))
    if not seal:
        return None
    opn = med.get(("aead", "aead", "mb_s_open"))
    if not opn:
        return seal["median"] * 8
    return 2 * 8 / (1 / seal["median"] + 1 / opn["median"])


def targets(med, samples=(), nproc=None):
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
    small = 1.3 if str(nproc) == "1" else 1.5
    v = [r("pps", "kpps")]
    t.append(("64-byte packets per second, ftv/WireGuard ≥ 1.5 on 2 "
              "vCPUs, ≥ 1.3 on 1", v,
              both(v, lambda x: x >= small)))
    v = [r("pps256", "kpps")]
    t.append(("256-byte packets per second, ftv/WireGuard ≥ 1.3", v,
              both(v, lambda x: x >= 1.3)))
    ceil = aead_ceiling_mbit(med)
    v = [None, None]
    if ceil:
        v = [m["median"] / ceil if m else None
             for m in (med.get(("ftv", "tcp1_fwd", "mbps")),
                       med.get(("ftv", "tcp1_rev", "mbps")))]
    t.append(("1 TCP stream, ftv ≥ 0.8 of the AEAD ceiling (both "
              "directions)", v, both(v, lambda x: x >= 0.8)))
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
    o = med.get(("aead", "aead", "mb_s_open"))
    ceil = aead_ceiling_mbit(med)
    if o:
        lines = [f"AEAD ceiling: the kernel's ChaCha20-Poly1305 (tcrypt "
                 f"mode 213) sealed {m['median']:.1f} MB/s and opened "
                 f"{o['median']:.1f} MB/s of 1420-byte messages on one "
                 f"CPU; a stream whose every byte is sealed once and "
                 f"opened once on two CPUs could not beat "
                 f"{ceil:.0f} Mbit/s."]
    else:
        lines = [f"AEAD ceiling: the kernel's ChaCha20-Poly1305 (tcrypt "
                 f"mode 213) sealed {m['median']:.1f} MB/s of 1420-byte "
                 f"messages on one CPU, {ceil:.0f} Mbit/s; a stream whose "
                 f"sealing and opening ran on one CPU could not beat half "
                 f"that ({ceil / 2:.0f} Mbit/s)."]
    for cfg, name in (("ftv", "ftv"), ("wireguard", "WireGuard")):
        for test, way in (("tcp1_fwd", "A→B"), ("tcp1_rev", "B→A")):
            one = med.get((cfg, test, "mbps"))
            if one:
                lines.append(f"- {name}, 1 stream {way}: "
                             f"{one['median']:.0f} Mbit/s, "
                             f"{one['median'] / ceil:.2f} of the ceiling")
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


# The probe section's censors (bench/probe.sh), in its order.
PROBE_CENSORS = [
    ("police", "a policer per connection"),
    ("freeze", "connections frozen after 16 KB"),
    ("rst", "RSTs injected after 40 segments"),
    ("mtu", "a 1280-byte link, ICMP dropped"),
    ("port", "new connections to the port in use dropped"),
    ("open", "connections whose first message looks random blocked"),
]
PROBE_SECONDS_MAX = 30      # one probe run, at most
PROBE_MB_MAX = 5            # and its bytes, MB


def probe_runs(samples):
    """The probe section's runs, by censor."""
    out = {}
    for s in samples:
        if s["test"].startswith("probe_"):
            out.setdefault(s["test"][len("probe_"):], []).append(s)
    return out


def probe_lines(samples):
    """A table of the probe section: each censor's selftest, how often
    it passed, and the most one probe took."""
    runs = probe_runs(samples)
    if not runs:
        return []
    lines = ["ftvctl probe against each censor (bench/probe.sh): each run "
             "is the censor's selftest whole (the verdict, a clean path's "
             "none, what --apply brings); the figures are the most one "
             "probe of it took, CPU being the whole VM's (both ends and "
             "the router) while the probe ran, a bound on the "
             "responder's.", "",
             "| censor | runs | passed | probes | s, most | MB, most | "
             "CPU-s, most |", "|---|---|---|---|---|---|---|"]
    for c, label in PROBE_CENSORS:
        rs = runs.get(c)
        if not rs:
            continue
        lines.append(
            f"| {label} | {len(rs)} | {sum(s.get('ok', 0) for s in rs)} | "
            f"{sum(s.get('probes', 0) for s in rs)} | "
            f"{max(s.get('seconds', 0) for s in rs):.1f} | "
            f"{max(s.get('bytes', 0) for s in rs) / 1e6:.2f} | "
            f"{max(s.get('cpu_s', 0) for s in rs):.2f} |")
    lines.append("")
    return lines


def probe_targets(samples):
    """Each censor's selftest passing in 10 of 10 runs; each probe within
    30 s and 5 MB."""
    runs = probe_runs(samples)
    t = []
    for c, label in PROBE_CENSORS:
        rs = runs.get(c)
        if not rs:
            continue
        ok = sum(s.get("ok", 0) for s in rs)
        t.append({"target": f"probe, {label}: the selftest passed in 10 of "
                  f"10 runs (passed, runs)", "values": [ok, len(rs)],
                  "met": ok == len(rs) and len(rs) >= 10})
    every = [s for rs in runs.values() for s in rs]
    if every:
        secs = max(s.get("seconds", 0) for s in every)
        mb = max(s.get("bytes", 0) for s in every) / 1e6
        t.append({"target": "probe: each run within 30 s and 5 MB (most "
                  "s, most MB)", "values": [secs, mb],
                  "met": secs <= PROBE_SECONDS_MAX and mb < PROBE_MB_MAX})
    return t


def markdown(med, meta, rows, rats, tgts, configs, samples=(), drops=None,
             path_drops=None, name="NAME", flows=()):
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
    # A flows-only run has path configurations and no path unit.
    if longp and (not flows or any(is_path(s["test"]) for s in samples)):
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
                     f"{name}-path.png."
                     + (" ftv, 4 flows via router is ftv via router with "
                        "`flows 4` on A's peer, at 40 ms without loss only."
                        if any(s["config"] == "path-ftv4"
                               and is_path(s["test"]) for s in samples)
                        else ""))
        lines.append("")
        sel = [(r, rt) for r, rt in pairs if is_path(r[0])]
        lines += table(med, [r for r, _ in sel], [rt for _, rt in sel],
                       longp, "plain TCP")
    lines += flows
    lines += aead_lines(med)
    lines += wire_lines(samples, drops or {}, path_drops)
    lines += probe_lines(samples)
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
          "path-ftv-fecoff": "#7fb2d9", "path-ftv4": "#2ca02c"}


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
    bars(axes[0][1], ["pps", "pps256"], "kpps",
         ["64-byte UDP", "256-byte UDP"],
         "UDP packets received through the device", "kpps", tcp)
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


def chart_flows(path, med, rows, meta):
    """NAME-flows.png: one connection against flows N, clean and policed
    (P and N x P marked), one stream each way."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = dict(CONFIGS)
    kinds = [k for k in ("clean", "police") if any(r["kind"] == k
                                                   for r in rows)]
    if not kinds:
        return False
    fig, axes = plt.subplots(1, len(kinds), figsize=(5 * len(kinds), 4.5),
                             squeeze=False)
    for ax, kind in zip(axes[0], kinds):
        sel = [r for r in rows if r["kind"] == kind]
        width = 0.38
        for i, cfg in enumerate((FLOWS_ONE, FLOWS_MANY)):
            xs, ys, lo, hi = [], [], [], []
            for j, r in enumerate(sel):
                m = med.get((cfg, r["test"], "mbps"))
                if not m:
                    continue
                xs.append(j + (i - 0.5) * width)
                ys.append(m["median"])
                lo.append(m["median"] - m["min"])
                hi.append(m["max"] - m["median"])
            ax.bar(xs, ys, width, yerr=[lo, hi], capsize=2,
                   label=names[cfg], color=COLORS.get(cfg))
            for x, y in zip(xs, ys):
                ax.annotate(fmt(y, "mbps"), (x, y), ha="center",
                            va="bottom", fontsize=7, xytext=(0, 2),
                            textcoords="offset points")
        police = sorted({r["police_mbit"] for r in sel
                         if r["police_mbit"] is not None})
        if kind == "police" and len(police) == 1:
            n = sel[0]["flows"]
            ax.axhline(police[0], color="#888", linestyle=":",
                       label=f"P = {num_text(police[0])} Mbit/s")
            ax.axhline(n * police[0], color="#888", linestyle="--",
                       label=f"{n} × P")
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels([r["label"].split(",")[0] for r in sel])
        ax.set_title("clean" if kind == "clean" else
                     "policed per connection, each way")
        ax.set_ylabel("Mbit/s")
        ax.grid(axis="y", alpha=0.3)
        ax.legend(fontsize=8)
    g, h = meta["guest"], meta["host"]
    rtt = rows[0]["rtt_ms"]
    fig.suptitle(f"make bench, flows, {h.get('date', '')}: Linux "
                 f"{g.get('kernel')}, {g.get('nproc')} vCPUs; through the "
                 f"router at {num_text(rtt) if rtt else '?'} ms, medians of "
                 f"{g['parameters'].get('repeats')}, bars min–max",
                 fontsize=9)
    fig.tight_layout(rect=(0, 0, 1, 0.93))
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
    tgts = targets(med, samples, meta["guest"].get("nproc"))
    frows = flows_rows(med, samples)
    tgts += flows_targets(frows)
    crows = censor_rows(med, samples)
    tgts += censor_targets(crows)
    tgts += probe_targets(samples)
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
    flows4_drops = ftv_drops(outdir, "path-ftv4-")
    md = markdown(med, meta, rows, rats, tgts, configs, samples, drops,
                  path_drops, name,
                  flows_lines(med, frows, flows4_drops, name)
                  + censor_lines(crows, None if frows else flows4_drops))
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
    if frows:
        data["flows"] = frows
    if crows:
        data["censor"] = crows
    if frows or crows:
        data["path_ftv4_drops"] = flows4_drops
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
        if frows and chart_flows(base + "-flows.png", med, frows, meta):
            written.append("-flows.png")
    except ImportError as e:
        print(f"report: no chart ({e}); install python3-matplotlib",
              file=sys.stderr)
    for ext in (".png", "-path.png", "-flows.png"):
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
