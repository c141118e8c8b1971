#!/usr/bin/env python3
"""NVIDIA's nccl-tests, run unmodified on each library, side by side (DESIGN.md section 7).

    nccl_tests_table.py OUT.md NCCL_LOG [NCCL_LOG ...] -- PURLIN_LOG [PURLIN_LOG ...]

Each log is the output of one *_perf run (the same binary and arguments for every log). Runs of
one library are repeated to see through the noise of eager launches: each size takes the median
over that library's runs, out of place and in place separately. The table gives both libraries'
medians and the ratio NCCL time / Purlin time (above 1: Purlin is faster), the lowest ratio of
each column, and the wrong elements summed over every run. Exit status 1 when a run reported a
wrong element or has no data lines.
"""
import re
import statistics
import sys

# A data line with nccl-tests' default columns: size count type redop root, then time algbw busbw
# #wrong out of place and the same four in place ("N/A" where a binary does not check).
DATA = re.compile(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(-?\d+)\s+"
                  r"(\S+)\s+\S+\s+\S+\s+(\S+)\s+(\S+)\s+\S+\s+\S+\s+(\S+)\s*$")


def read(path):
    """{bytes: (oop_us, ip_us, wrong)} of one log."""
    rows = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = DATA.match(line)
            if not m:
                continue
            size = int(m.group(1))
            wrong = sum(int(w) for w in (m.group(7), m.group(9)) if w.isdigit())
            rows[size] = (float(m.group(6)), float(m.group(8)), wrong)
    return rows


def medians(paths):
    runs = [read(p) for p in paths]
    sizes = sorted(set().union(*runs))
    out = {}
    for s in sizes:
        got = [r[s] for r in runs if s in r]
        out[s] = (statistics.median(g[0] for g in got), statistics.median(g[1] for g in got),
                  sum(g[2] for g in got), len(got))
    return out, runs


def main(argv):
    if "--" not in argv or len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    cut = argv.index("--")
    out_path, nccl_logs, purlin_logs = argv[1], argv[2:cut], argv[cut + 1:]
    nccl, nccl_runs = medians(nccl_logs)
    purlin, purlin_runs = medians(purlin_logs)
    status = 0
    for path, run in zip(nccl_logs + purlin_logs, nccl_runs + purlin_runs):
        if not run:
            print(f"{path}: no data lines")
            status = 1
    lines = [
        f"nccl-tests, {len(nccl_logs)} run(s) of NCCL and {len(purlin_logs)} of Purlin, the median"
        " per size; ratio = NCCL us / Purlin us (above 1: Purlin is faster)",
        "",
        "| bytes | NCCL oop us | Purlin oop us | ratio oop | NCCL ip us | Purlin ip us | ratio ip |"
        " wrong NCCL | wrong Purlin |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    lowest = {"oop": (float("inf"), None), "ip": (float("inf"), None)}
    for s in sorted(set(nccl) & set(purlin)):
        n, p = nccl[s], purlin[s]
        ratios = []
        for i, key in ((0, "oop"), (1, "ip")):
            r = n[i] / p[i] if p[i] > 0 else float("nan")
            ratios.append(r)
            if r < lowest[key][0]:
                lowest[key] = (r, s)
        lines.append(f"| {s} | {n[0]:.2f} | {p[0]:.2f} | {ratios[0]:.2f} | {n[1]:.2f} | {p[1]:.2f} |"
                     f" {ratios[1]:.2f} | {n[2]} | {p[2]} |")
        if n[2] or p[2]:
            status = 1
    lines.append("")
    for key in ("oop", "ip"):
        r, s = lowest[key]
        if s is not None:
            lines.append(f"lowest ratio {key}: {r:.2f} at {s} B")
    text = "\n".join(lines) + "\n"
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(text)
    print(text, end="")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
