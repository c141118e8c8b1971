#!/usr/bin/env python3
"""Summarizes snac.csv (written by snac_bench) as markdown on stdout: latency over 1 KiB-512 KiB,
HBM efficiency and bus bandwidth over 1 MiB-1 GiB, and the issue's targets, each met or missed.
Draws latency.png and efficiency.png next to the data when matplotlib is available.

usage: summarize.py DIR
       summarize.py --sweep DIR...   one markdown row per run directory (sweep.sh): its
                                     configuration (config.txt) and the figures the targets name
       summarize.py --compare DIR    Purlin beside the reference NCCL (compare.sh): reads
                                     DIR/purlin_rN.csv and DIR/nccl_rN.csv, writes DIR/compare.csv,
                                     DIR/summary.md and DIR/speedup.png
"""
import csv
import glob
import math
import os
import re
import sys

KIB = 1024
MIB = 1024 * KIB
ORDER = ["AllReduce", "AllGather", "ReduceScatter", "AllToAll", "Broadcast", "Reduce", "Gather",
         "Scatter", "AllGatherV", "ReduceScatterV", "AllToAllV", "SendRecvAllToAll"]


def load(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("bytes", "ranks", "graph_calls", "replays"):
            r[k] = int(r[k])
        for k in ("us_per_call", "algbw_GBps", "busbw_GBps", "memcpy_rw_GBps"):
            r[k] = float(r[k])
        r["hbm_eff"] = float(r["hbm_eff"]) if r["hbm_eff"] else None
        # Columns added with the comparison; empty wrong: the size was not checked.
        r["library"] = r.get("library") or "purlin"
        r["wrong"] = int(r["wrong"]) if r.get("wrong") else None
        r["gpus"] = int(r.get("gpus") or 1)  # runs before --gpus: every rank on GPU 0
    return rows


def placement(ranks, gpus):
    """Where the ranks of a run were, in words."""
    if ranks == 1:
        return "1 rank"
    if gpus <= 1:
        return f"{ranks} ranks sharing one GPU"
    if gpus >= ranks:
        return f"{ranks} ranks, one per GPU"
    return f"{ranks} ranks over {gpus} GPUs"


def size_label(b):
    if b >= 1024 * MIB:
        return f"{b // (1024 * MIB)} GiB"
    if b >= MIB:
        return f"{b // MIB} MiB"
    if b >= KIB:
        return f"{b // KIB} KiB"
    return f"{b} B"


def verdict(ok):
    return "met" if ok else "**missed**"


def table(rows, lo, hi, cell, out):
    colls = [c for c in ORDER if any(r["collective"] == c for r in rows)]
    sizes = sorted({r["bytes"] for r in rows if lo <= r["bytes"] <= hi})
    if not sizes:
        out.append("(no sizes in this range)\n")
        return
    at = {(r["collective"], r["bytes"]): r for r in rows}
    out.append("| size | " + " | ".join(colls) + " |")
    out.append("|---" * (len(colls) + 1) + "|")
    for b in sizes:
        out.append(f"| {size_label(b)} | " + " | ".join(
            cell(at[(c, b)]) if (c, b) in at else "" for c in colls) + " |")
    out.append("")


def find(rows, coll, size):
    return next((r for r in rows if r["collective"] == coll and r["bytes"] == size), None)


def targets(rows, out):
    out.append("## Targets\n")
    r = find(rows, "AllReduce", 8 * KIB)
    if r:
        out.append(f"- AllReduce 8 KiB <= 4 us in a graph: {r['us_per_call']:.2f} us "
                   f"{verdict(r['us_per_call'] <= 4.0)}")
    else:
        out.append("- AllReduce 8 KiB <= 4 us in a graph: not measured")
    for coll in ("AllGather", "AllToAll"):
        r = find(rows, coll, 256 * MIB)
        if r and r["hbm_eff"] is not None:
            out.append(f"- {coll} >= 70% HBM efficiency at 256 MiB: {100 * r['hbm_eff']:.1f}% "
                       f"{verdict(r['hbm_eff'] >= 0.70)}")
        else:
            out.append(f"- {coll} >= 70% HBM efficiency at 256 MiB: not measured")
    out.append("")


def read_rows(d, name):
    """The rows of d/name as dicts of strings; none when the file is missing."""
    path = os.path.join(d, name)
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def launch_floor(d, out):
    """The per-call floor of the ranks sharing the GPU (launch_floor.csv), at the most ranks."""
    rows = read_rows(d, "launch_floor.csv")
    if not rows:
        return
    most = max(int(r["ranks"]) for r in rows)
    out.append(f"## Launch floor, us per call, {most} ranks (launch_floor.csv)\n")
    out.append("| kernel | CTAs per rank | dynamic shared memory | us per call |")
    out.append("|---|---|---|---|")
    for r in rows:
        if int(r["ranks"]) == most:
            out.append(f"| {r['kernel']} | {r['ctas']} | {int(r['smem_bytes']) // KIB} KiB | "
                       f"{float(r['us_per_call']):.2f} |")
    out.append("")


def packet_latency(d, out):
    """A packet's one-way trip between two GPUs (packet.csv), or a GPU and itself."""
    rows = read_rows(d, "packet.csv")
    if not rows:
        return
    a, b = rows[0]["gpu_a"], rows[0]["gpu_b"]
    out.append(f"## Packet push between GPU {a} and GPU {b}, one way (packet.csv)\n")
    if a == b:
        out.append("One GPU against itself: a stand-in for a peer, not NVLink.\n")
    out.append("| scope | us | wrong |")
    out.append("|---|---|---|")
    for r in rows:
        out.append(f"| {r['scope']} | {float(r['one_way_us']):.3f} | {r['wrong']} |")
    out.append("")


def plots(d, rows):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    colls = [c for c in ORDER if any(r["collective"] == c for r in rows)]
    for fname, lo, hi, key, scale, ylabel in (
            ("latency.png", 0, 512 * KIB, "us_per_call", 1, "us per call"),
            ("efficiency.png", MIB, 1 << 40, "hbm_eff", 100, "% of cudaMemcpyAsync read+write rate")):
        fig, ax = plt.subplots(figsize=(9, 6))
        for c in colls:
            pts = sorted((r["bytes"], r[key] * scale) for r in rows
                         if r["collective"] == c and lo <= r["bytes"] <= hi and r[key] is not None)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=c)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message bytes")
        ax.set_ylabel(ylabel)
        if key == "hbm_eff":
            ax.axhline(70, color="k", linestyle="--", label="target 70%")
        ax.legend(fontsize=7)
        fig.savefig(os.path.join(d, fname), dpi=120)


SWEEP_FIGURES = (("AllReduce", 8 * KIB, "us"), ("AllGather", KIB, "us"),
                 ("AllReduce", 256 * MIB, "eff"), ("AllGather", 256 * MIB, "eff"),
                 ("AllToAll", 256 * MIB, "eff"), ("ReduceScatter", 256 * MIB, "eff"))


def sweep(dirs):
    out = ["| configuration | " + " | ".join(
        f"{c} {size_label(b)} {'us' if k == 'us' else '% HBM'}" for c, b, k in SWEEP_FIGURES) + " |",
        "|---" * (len(SWEEP_FIGURES) + 1) + "|"]
    for d in dirs:
        rows = load(os.path.join(d, "snac.csv"))
        cfg_path = os.path.join(d, "config.txt")
        cfg = open(cfg_path).read().strip() if os.path.exists(cfg_path) else d
        cells = []
        for c, b, k in SWEEP_FIGURES:
            r = find(rows, c, b)
            if r is None or (k == "eff" and r["hbm_eff"] is None):
                cells.append("")
            else:
                cells.append(f"{r['us_per_call']:.2f}" if k == "us" else f"{100 * r['hbm_eff']:.1f}")
        out.append(f"| `{cfg or '(defaults)'}` | " + " | ".join(cells) + " |")
    print("\n".join(out))


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else None


def join(d):
    """compare.csv's rows: every (collective, ranks, bytes) measured on either library."""
    runs = {}
    for lib in ("purlin", "nccl"):
        for path in sorted(glob.glob(os.path.join(d, f"{lib}_r*.csv"))):
            if re.fullmatch(rf"{lib}_r\d+\.csv", os.path.basename(path)):
                for r in load(path):
                    runs[(lib, r["collective"], r["ranks"], r["bytes"])] = r
    keys = sorted({k[1:] for k in runs},
                  key=lambda k: (-k[1], ORDER.index(k[0]) if k[0] in ORDER else len(ORDER), k[2]))
    rows = []
    for c, n, b in keys:
        p, q = runs.get(("purlin", c, n, b)), runs.get(("nccl", c, n, b))
        rows.append({
            "collective": c, "ranks": n, "bytes": b, "gpus": (p or q)["gpus"],
            "purlin_us": p["us_per_call"] if p else None,
            "nccl_us": q["us_per_call"] if q else None,
            "speedup": q["us_per_call"] / p["us_per_call"] if p and q and p["us_per_call"] > 0 else None,
            "wrong_purlin": p["wrong"] if p else None,
            "wrong_nccl": q["wrong"] if q else None,
        })
    return rows


def fmt(v, spec):
    return "" if v is None else format(v, spec)


def write_compare_csv(d, rows):
    cols = ("collective", "ranks", "bytes", "purlin_us", "nccl_us", "speedup", "wrong_purlin", "wrong_nccl")
    with open(os.path.join(d, "compare.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(cols)
        for r in rows:
            w.writerow(["" if r[k] is None else r[k] for k in cols])


def wrong_cell(rs, lib):
    measured = [r for r in rs if r[f"{lib}_us"] is not None]
    checked = [r[f"wrong_{lib}"] for r in measured if r[f"wrong_{lib}"] is not None]
    if not measured:
        return "-"
    return str(sum(checked)) if checked else "not checked"


def span(sizes):
    return f"{size_label(sizes[0])}-{size_label(sizes[-1])}" if sizes else "none"


def ratio_table(rows, out):
    colls = [c for c in ORDER if any(r["collective"] == c for r in rows)]
    small = [b for b in sorted({r["bytes"] for r in rows}) if b <= 512 * KIB]
    large = [b for b in sorted({r["bytes"] for r in rows}) if b >= MIB]
    out.append(f"| collective | speedup {span(small)} (geomean) | speedup {span(large)} (geomean) | "
               "min speedup (size) | 8 KiB Purlin us | 8 KiB NCCL us | wrong Purlin | wrong NCCL |")
    out.append("|---" * 8 + "|")
    for c in colls:
        rs = [r for r in rows if r["collective"] == c]
        both = [r for r in rs if r["speedup"] is not None]
        lo = geomean([r["speedup"] for r in both if r["bytes"] <= 512 * KIB])
        hi = geomean([r["speedup"] for r in both if r["bytes"] >= MIB])
        worst = min(both, key=lambda r: r["speedup"]) if both else None
        at8 = next((r for r in rs if r["bytes"] == 8 * KIB), None)
        out.append(f"| {c} | {fmt(lo, '.2f')} | {fmt(hi, '.2f')} | " +
                   (f"{worst['speedup']:.2f} ({size_label(worst['bytes'])})" if worst else "") +
                   f" | {fmt(at8 and at8['purlin_us'], '.2f')} | {fmt(at8 and at8['nccl_us'], '.2f')} | "
                   f"{wrong_cell(rs, 'purlin')} | {wrong_cell(rs, 'nccl')} |")
    out.append("")


def size_table(rows, out):
    colls = [c for c in ORDER if any(r["collective"] == c for r in rows)]
    at = {(r["collective"], r["bytes"]): r for r in rows}
    out.append("| size | " + " | ".join(colls) + " |")
    out.append("|---" * (len(colls) + 1) + "|")
    for b in sorted({r["bytes"] for r in rows}):
        cells = []
        for c in colls:
            r = at.get((c, b))
            if r is None:
                cells.append("")
                continue
            cell = f"{fmt(r['purlin_us'], '.2f') or '-'} / {fmt(r['nccl_us'], '.2f') or '-'}"
            if r["speedup"] is not None:
                cell += f" ({r['speedup']:.2f}x)"
            if (r["wrong_purlin"] or 0) + (r["wrong_nccl"] or 0) > 0:
                cell += " **wrong**"
            cells.append(cell)
        out.append(f"| {size_label(b)} | " + " | ".join(cells) + " |")
    out.append("")


def speedup_plot(d, rows, ranks):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib import ticker
    except ImportError:
        return "not drawn: matplotlib is not importable"
    fig, axes = plt.subplots(1, len(ranks), figsize=(7 * len(ranks), 5), squeeze=False)
    for ax, n in zip(axes[0], ranks):
        for c in ORDER:
            pts = [(r["bytes"], r["speedup"]) for r in rows
                   if r["ranks"] == n and r["collective"] == c and r["speedup"] is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=c)
        ax.axhline(1.0, color="k", linestyle="--", linewidth=1)
        ax.set_xscale("log", base=2)
        # A ratio: 2x faster and 2x slower lie equally far from the line at 1.
        ax.set_yscale("log", base=2)
        # At least 0.5x-2x, so run-to-run noise around 1.0 does not fill a panel.
        lo, hi = ax.get_ylim()
        ax.set_ylim(min(lo, 0.5), max(hi, 2.0))
        ax.yaxis.set_major_locator(ticker.LogLocator(base=2))
        ax.yaxis.set_major_formatter(ticker.FuncFormatter(lambda y, _: f"{y:.3g}"))
        ax.yaxis.set_minor_formatter(ticker.NullFormatter())
        ax.set_xlabel("message bytes")
        ax.set_ylabel("speedup = NCCL us / Purlin us")
        ax.set_title(placement(n, max(r["gpus"] for r in rows if r["ranks"] == n)))
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(d, "speedup.png"), dpi=120)
    return "speedup.png"


def append_environment(d, out):
    """The run's environment.txt, verbatim, as a code block."""
    env = os.path.join(d, "environment.txt")
    if os.path.exists(env):
        out.append("```\n" + open(env).read().strip() + "\n```\n")


def compare(d):
    """Writes compare.csv, summary.md and speedup.png; 1 when an element was wrong or nothing was read."""
    rows = join(d)
    write_compare_csv(d, rows)
    out = ["# Purlin beside NCCL (compare.sh)\n"]
    append_environment(d, out)
    if not rows:
        out.append("No purlin_rN.csv or nccl_rN.csv rows.")
    out.append("speedup = NCCL us / Purlin us per call (above 1: Purlin is faster); both libraries run by "
               "the same benchmark program, the same graph method and the same ranks (environment.txt above). "
               "wrong: elements that differ from the host reference (not checked: above --check-max or "
               "--no-check).\n")
    ranks = sorted({r["ranks"] for r in rows}, reverse=True)
    for n in ranks:
        rs = [r for r in rows if r["ranks"] == n]
        out.append(f"## {placement(n, max(r['gpus'] for r in rs))}\n")
        ratio_table(rs, out)
        one_side = []
        for c in ORDER:
            alone = [r for r in rs if r["collective"] == c and r["speedup"] is None]
            for lib, key in (("Purlin", "purlin_us"), ("NCCL", "nccl_us")):
                sizes = [size_label(r["bytes"]) for r in alone if r[key] is not None]
                if sizes:
                    every = len(sizes) == sum(r["collective"] == c for r in rs)
                    one_side.append(f"{c} on {lib} only ({'every size' if every else ', '.join(sizes)})")
        if one_side:
            out.append("Measured on one library only (not available, failed or skipped: see the logs): " +
                       "; ".join(one_side) + ".\n")
        out.append(f"### Per size, {n} rank{'s' if n > 1 else ''}: Purlin us / NCCL us (speedup)\n")
        size_table(rs, out)
    plot = speedup_plot(d, rows, ranks) if rows else "not drawn: no rows"
    out.append(f"Plot: {plot}.")
    with open(os.path.join(d, "summary.md"), "w") as f:
        f.write("\n".join(out) + "\n")
    print(f"summarize.py: {len(rows)} rows in {os.path.join(d, 'compare.csv')}; speedup plot {plot}")
    wrong = any((r["wrong_purlin"] or 0) + (r["wrong_nccl"] or 0) > 0 for r in rows)
    return 1 if wrong or not rows else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--sweep":
        sweep(sys.argv[2:])
        return
    if len(sys.argv) > 2 and sys.argv[1] == "--compare":
        sys.exit(compare(sys.argv[2]))
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    rows = load(os.path.join(d, "snac.csv"))
    out = ["# Native collectives (SNAC)\n"]
    append_environment(d, out)
    if not rows:
        out.append("No snac.csv rows.")
        print("\n".join(out))
        return
    ranks = sorted({r["ranks"] for r in rows})
    places = "; ".join(placement(n, max(r["gpus"] for r in rows if r["ranks"] == n)) for n in ranks)
    out.append(f"{places} (threads), bf16, sum; "
               f"R = cudaMemcpyAsync read + write rate = {rows[0]['memcpy_rw_GBps']:.0f} GB/s.\n")
    out.append("## Latency, us per call (graph of up to 128 calls)\n")
    table(rows, 0, 512 * KIB, lambda r: f"{r['us_per_call']:.2f}", out)
    out.append("## HBM efficiency, % (2 x output bytes of all ranks / time / R)\n")
    table(rows, MIB, 1 << 40, lambda r: f"{100 * r['hbm_eff']:.0f}" if r["hbm_eff"] is not None else "", out)
    out.append("## Bus bandwidth, GB/s (nccl-tests factors)\n")
    table(rows, MIB, 1 << 40, lambda r: f"{r['busbw_GBps']:.0f}", out)
    targets(rows, out)
    launch_floor(d, out)
    packet_latency(d, out)
    print("\n".join(out))
    plots(d, rows)


if __name__ == "__main__":
    main()
