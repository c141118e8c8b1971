#!/usr/bin/env python3
"""Summarizes snac.csv (written by snac_bench) as markdown on stdout: latency over 1 KiB-512 KiB,
HBM efficiency and bus bandwidth over 1 MiB-1 GiB, and the issue's targets, each met or missed.
Draws latency.png and efficiency.png next to the data when matplotlib is available.

usage: summarize.py DIR
       summarize.py --sweep DIR...   one markdown row per run directory (sweep.sh): its
                                     configuration (config.txt) and the figures the targets name
"""
import csv
import os
import sys

KIB = 1024
MIB = 1024 * KIB
ORDER = ["AllReduce", "AllGather", "ReduceScatter", "AllToAll", "Broadcast", "Reduce", "Gather",
         "Scatter", "AllGatherV", "ReduceScatterV", "AllToAllV"]


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
    return rows


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


def launch_floor(d, out):
    """The per-call floor of the ranks sharing the GPU (launch_floor.csv), at the most ranks."""
    path = os.path.join(d, "launch_floor.csv")
    if not os.path.exists(path):
        return
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
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


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--sweep":
        sweep(sys.argv[2:])
        return
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    rows = load(os.path.join(d, "snac.csv"))
    out = ["# Native collectives (SNAC)\n"]
    env = os.path.join(d, "environment.txt")
    if os.path.exists(env):
        out.append("```\n" + open(env).read().strip() + "\n```\n")
    if not rows:
        out.append("No snac.csv rows.")
        print("\n".join(out))
        return
    ranks = sorted({r["ranks"] for r in rows})
    out.append(f"{', '.join(str(n) for n in ranks)} ranks sharing one GPU (threads), bf16, sum; "
               f"R = cudaMemcpyAsync read + write rate = {rows[0]['memcpy_rw_GBps']:.0f} GB/s.\n")
    out.append("## Latency, us per call (graph of up to 128 calls)\n")
    table(rows, 0, 512 * KIB, lambda r: f"{r['us_per_call']:.2f}", out)
    out.append("## HBM efficiency, % (2 x output bytes of all ranks / time / R)\n")
    table(rows, MIB, 1 << 40, lambda r: f"{100 * r['hbm_eff']:.0f}" if r["hbm_eff"] is not None else "", out)
    out.append("## Bus bandwidth, GB/s (nccl-tests factors)\n")
    table(rows, MIB, 1 << 40, lambda r: f"{r['busbw_GBps']:.0f}", out)
    targets(rows, out)
    launch_floor(d, out)
    print("\n".join(out))
    plots(d, rows)


if __name__ == "__main__":
    main()
