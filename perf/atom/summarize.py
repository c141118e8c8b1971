#!/usr/bin/env python3
"""Summarizes copy.csv, reduce.csv, placement.csv and peer.csv (written by atom_bench) as markdown on stdout, checks the
issue's targets, and draws copy.png / reduce.png next to the data when matplotlib is available.

usage: summarize.py DIR
"""
import csv
import os
import sys
from collections import defaultdict


def load(path):
    if not os.path.exists(path):
        return []
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k, v in r.items():
            try:
                r[k] = float(v) if "." in v or "e" in v else int(v)
            except ValueError:
                pass
    return rows


def label(r):
    # Register-path rows (reduce.csv's pipeline_sources below the source count) differ by unroll.
    regs = "pipeline_sources" in r and r["pipeline_sources"] < r.get("sources", 0)
    suffix = f" U{r['unroll']}" if regs or r["impl"] == "generic_vector" else ""
    return f"{r['impl']} T{r['threads']} S{r['stages']} B{r['stage_bytes'] // 1024}K{suffix}"


def best_by_ctas(rows, pred, key):
    best = {}
    for r in rows:
        if pred(r) and (r["ctas"] not in best or r[key] > best[r["ctas"]][key]):
            best[r["ctas"]] = r
    return best


def verdict(ok):
    return "met" if ok else "**missed**"


def copy_summary(rows, out):
    memcpy = next((r["GBps"] for r in rows if r["impl"] == "cudaMemcpyAsync"), None)
    aligned = [r for r in rows if r["dst_misalign"] == 0]
    atoms = [r for r in aligned if r["impl"] not in ("cudaMemcpyAsync", "plain_uint4")]
    out.append("## Copy, 256 MiB\n")
    if memcpy:
        out.append(f"cudaMemcpyAsync: {memcpy:.0f} GB/s\n")
    ctas = sorted({r["ctas"] for r in aligned if r["ctas"] > 0})
    impls = ["plain_uint4", "generic_vector", "sm80_pipeline", "sm90_bulk", "sm90_bulk_store",
             "native_default"]
    out.append("Best configuration of each implementation, GB/s (GB/s per CTA):\n")
    out.append("| CTAs | " + " | ".join(impls) + " |")
    out.append("|---" * (len(impls) + 1) + "|")
    best = {i: best_by_ctas(aligned, lambda r, i=i: r["impl"] == i, "GBps") for i in impls}
    for c in ctas:
        cells = []
        for i in impls:
            r = best[i].get(c)
            cells.append(f"{r['GBps']:.0f} ({r['GBps_per_cta']:.1f})" if r else "")
        out.append(f"| {c} | " + " | ".join(cells) + " |")
    out.append("")
    out.append("Configuration of the best Atom per CTA count:\n")
    overall = best_by_ctas(atoms, lambda r: True, "GBps")
    for c in ctas:
        if c in overall:
            r = overall[c]
            out.append(f"- {c} CTAs: {label(r)}: {r['GBps']:.0f} GB/s")
    out.append("")

    depth = [r for r in aligned if r["impl"] == "sm80_pipeline" and r["threads"] == 256
             and r["stage_bytes"] == 16384]
    if depth:
        out.append("sm80_pipeline, 256 threads, 16 KiB stages: GB/s by depth (rows) and CTAs:\n")
        dc = sorted({r["ctas"] for r in depth})
        out.append("| S | " + " | ".join(str(c) for c in dc) + " |")
        out.append("|---" * (len(dc) + 1) + "|")
        table = {(r["stages"], r["ctas"]): r["GBps"] for r in depth}
        for s in sorted({r["stages"] for r in depth}):
            out.append(f"| {s} | " + " | ".join(
                f"{table[(s, c)]:.0f}" if (s, c) in table else "" for c in dc) + " |")
        out.append("")

    mis = [r for r in rows if r["dst_misalign"] != 0]
    if mis:
        out.append("Destination misaligned by 5 bytes relative to the source (realignment cost):\n")
        for r in mis:
            ref = next((a for a in aligned if a["impl"] == r["impl"] and a["ctas"] == r["ctas"]
                        and a["stages"] == r["stages"] and a["stage_bytes"] == r["stage_bytes"]
                        and a["threads"] == r["threads"]), None)
            rel = f" ({100 * r['GBps'] / ref['GBps']:.0f}% of aligned)" if ref else ""
            out.append(f"- {label(r)}, {r['ctas']} CTAs: {r['GBps']:.0f} GB/s{rel}")
        out.append("")

    out.append("Targets:\n")
    for c, target in ((8, 360), (16, 720), (32, 1440)):
        r = overall.get(c)
        if r:
            out.append(f"- {c} CTAs >= {target} GB/s: {r['GBps']:.0f} ({label(r)}) {verdict(r['GBps'] >= target)}")
    per_cta = [overall[c] for c in ctas if c <= 32 and c in overall]
    if per_cta:
        worst = min(per_cta, key=lambda r: r["GBps_per_cta"])
        out.append(f"- >= 45 GB/s per CTA up to 32 CTAs: lowest {worst['GBps_per_cta']:.1f} at "
                   f"{worst['ctas']} CTAs {verdict(worst['GBps_per_cta'] >= 45)}")
    if memcpy:
        le64 = [r for r in atoms if r["ctas"] <= 64]
        if le64:
            r = max(le64, key=lambda r: r["GBps"])
            out.append(f"- >= 90% of cudaMemcpyAsync with <= 64 CTAs: {r['GBps']:.0f} GB/s = "
                       f"{100 * r['GBps'] / memcpy:.1f}% ({label(r)}, {r['ctas']} CTAs) "
                       f"{verdict(r['GBps'] >= 0.9 * memcpy)}")
    out.append("")
    return memcpy


def reduce_summary(rows, out):
    if not rows:
        return
    memcpy = rows[0]["memcpy_GBps"]
    out.append("## Reduce, 8 bf16 sources x 128 MiB (sum)\n")
    out.append(f"cudaMemcpyAsync {memcpy:.0f} GB/s payload = {2 * memcpy:.0f} GB/s HBM traffic; "
               f"limit for 9 buffers: {2 * memcpy / 9:.0f} GB/s of output.\n")
    aligned = [r for r in rows if r["src_misalign"] == 0]
    best = best_by_ctas(aligned, lambda r: True, "hbm_fraction")
    out.append("| CTAs | best configuration | output GB/s | traffic GB/s | % of HBM limit |")
    out.append("|---|---|---|---|---|")
    for c in sorted(best):
        r = best[c]
        out.append(f"| {c} | {label(r)} | {r['out_GBps']:.0f} | {r['traffic_GBps']:.0f} | "
                   f"{100 * r['hbm_fraction']:.1f} |")
    out.append("")
    impls = sorted({label(r) for r in aligned})
    out.append("Every configuration, % of the HBM limit by CTA count:\n")
    cs = sorted({r["ctas"] for r in aligned})
    out.append("| configuration | " + " | ".join(str(c) for c in cs) + " |")
    out.append("|---" * (len(cs) + 1) + "|")
    table = {(label(r), r["ctas"]): r["hbm_fraction"] for r in aligned}
    for i in impls:
        out.append(f"| {i} | " + " | ".join(
            f"{100 * table[(i, c)]:.0f}" if (i, c) in table else "" for c in cs) + " |")
    out.append("")
    mis = [r for r in rows if r["src_misalign"] != 0]
    for r in mis:
        out.append(f"- sources misaligned, {label(r)}, {r['ctas']} CTAs: "
                   f"{100 * r['hbm_fraction']:.1f}% of the HBM limit")
    le64 = [r for r in aligned if r["ctas"] <= 64]
    if le64:
        r = max(le64, key=lambda r: r["hbm_fraction"])
        out.append(f"\nTarget >= 85% of the HBM limit with <= 64 CTAs: {100 * r['hbm_fraction']:.1f}% "
                   f"({label(r)}, {r['ctas']} CTAs) {verdict(r['hbm_fraction'] >= 0.85)}\n")


def plots(d, copy_rows, reduce_rows, memcpy):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return
    if copy_rows:
        aligned = [r for r in copy_rows if r["dst_misalign"] == 0 and r["ctas"] > 0]
        fig, ax = plt.subplots(figsize=(9, 6))
        series = defaultdict(list)
        for r in aligned:
            if r["impl"] == "sm80_pipeline" and r["threads"] == 256 and r["stage_bytes"] == 16384:
                series[f"cp.async S={r['stages']} x 16K"].append((r["ctas"], r["GBps"]))
            elif r["impl"] == "plain_uint4":
                series["plain uint4 kernel"].append((r["ctas"], r["GBps"]))
        for name, impl in (("generic vector (best)", "generic_vector"),
                           ("bulk loads (best)", "sm90_bulk"),
                           ("bulk load+store (best)", "sm90_bulk_store")):
            b = best_by_ctas(aligned, lambda r, impl=impl: r["impl"] == impl, "GBps")
            series[name] = [(c, b[c]["GBps"]) for c in b]
        for name, pts in sorted(series.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=name)
        if memcpy:
            ax.axhline(memcpy, color="k", linestyle="--", label="cudaMemcpyAsync")
        xs = [1, 132]
        ax.plot(xs, [45 * x for x in xs], color="gray", linestyle=":", label="45 GB/s per CTA")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("CTAs")
        ax.set_ylabel("GB/s")
        ax.set_title("Atom copy, 256 MiB")
        ax.legend(fontsize=7)
        fig.savefig(os.path.join(d, "copy.png"), dpi=120)
    if reduce_rows:
        fig, ax = plt.subplots(figsize=(9, 6))
        series = defaultdict(list)
        for r in reduce_rows:
            if r["src_misalign"] == 0:
                series[label(r)].append((r["ctas"], 100 * r["hbm_fraction"]))
        for name, pts in sorted(series.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker=".", label=name)
        ax.axhline(85, color="k", linestyle="--", label="target 85%")
        ax.set_xlabel("CTAs")
        ax.set_ylabel("% of HBM limit")
        ax.set_title("Atom reduce, 8 bf16 sources")
        ax.legend(fontsize=6)
        fig.savefig(os.path.join(d, "reduce.png"), dpi=120)


def placement_summary(rows, out):
    """Per CTA count (last launch): how many CTAs share a TPC (SM ids 2k and 2k+1) with another
    CTA, and the per-CTA copy rate of those that share against those alone."""
    if not rows:
        return
    out.append("## Where copy CTAs land (placement.csv)\n")
    out.append("| impl | CTAs | kernel us | CTAs sharing a TPC | GB/s per CTA alone | sharing |")
    out.append("|---|---|---|---|---|---|")
    groups = defaultdict(list)
    for r in rows:
        groups[(r["impl"], r["ctas"], r["launch"])].append(r)
    for (impl, ctas, launch), rs in sorted(groups.items()):
        if launch != max(x["launch"] for x in rows):
            continue
        per_tpc = defaultdict(int)
        for r in rs:
            per_tpc[r["tpc_guess"]] += 1
        shared = [r for r in rs if per_tpc[r["tpc_guess"]] > 1]
        alone = [r for r in rs if per_tpc[r["tpc_guess"]] == 1]
        mean = lambda xs: sum(x["cta_GBps"] for x in xs) / len(xs) if xs else float("nan")
        out.append(f"| {impl} | {ctas} | {rs[0]['kernel_us']:.0f} | {len(shared)} | "
                   f"{mean(alone):.1f} | {mean(shared):.1f} |")
    out.append("")


def peer_summary(rows, out):
    """peer.csv: copies between two GPUs."""
    if not rows:
        return
    a, b = rows[0]["src_dev"], rows[0]["dst_dev"]
    out.append(f"## Between GPU {a} and GPU {b} (peer.csv)\n")
    if a == b:
        out.append("One GPU against itself: a stand-in for a peer, not NVLink.\n")
    for direction in ("pull", "push"):
        rs = [r for r in rows if r["direction"] == direction]
        if not rs:
            continue
        peer_copy = next((r["GBps"] for r in rs if r["impl"] == "cudaMemcpyPeerAsync"), None)
        out.append(f"### {direction}: 256 MiB, GB/s (GB/s per CTA)\n")
        if peer_copy:
            out.append(f"cudaMemcpyPeerAsync: {peer_copy:.0f} GB/s\n")
        out.append("| CTAs | native_default | best sm80_pipeline depth |")
        out.append("|---|---|---|")
        native = best_by_ctas(rs, lambda r: r["impl"] == "native_default", "GBps")
        piped = best_by_ctas(rs, lambda r: r["impl"] == "sm80_pipeline", "GBps")
        for c in sorted(set(native) | set(piped)):
            n = native.get(c)
            p = piped.get(c)
            cell_n = f"{n['GBps']:.0f} ({n['GBps_per_cta']:.1f})" if n else ""
            cell_p = f"{p['GBps']:.0f} (S{p['stages']})" if p else ""
            out.append(f"| {c} | {cell_n} | {cell_p} |")
        out.append("")
        if direction == "pull" and a != b and 8 in native:
            ok = native[8]["GBps"] >= 372
            out.append(f"Target: pull by native_default (the Atom Purlin uses) >= 372 GB/s with 8 CTAs: {native[8]['GBps']:.0f}, {verdict(ok)}.\n")


def main():
    d = sys.argv[1] if len(sys.argv) > 1 else "."
    copy_rows = load(os.path.join(d, "copy.csv"))
    reduce_rows = load(os.path.join(d, "reduce.csv"))
    out = ["# Atom benchmarks\n"]
    env = os.path.join(d, "environment.txt")
    if os.path.exists(env):
        out.append("```\n" + open(env).read().strip() + "\n```\n")
    memcpy = copy_summary(copy_rows, out) if copy_rows else None
    reduce_summary(reduce_rows, out)
    placement_summary(load(os.path.join(d, "placement.csv")), out)
    peer_summary(load(os.path.join(d, "peer.csv")), out)
    print("\n".join(out))
    plots(d, copy_rows, reduce_rows, memcpy)


if __name__ == "__main__":
    main()
