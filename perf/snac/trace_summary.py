#!/usr/bin/env python3
"""Summarize a launch timeline (PURLIN_TRACE_FILE=DIR/t: DIR/t.rank0 ... one CSV per rank).

Usage: trace_summary.py DIR [DIR ...]

For every recorded launch (the latest four, ordered by start), prints per role group the
earliest and latest time of each trace point, in microseconds from the launch's first CTA
entry (a point-to-point launch's first point: it records no entry), and the gap since the
previous launch's last exit; then, per role group, the mean time a worker spends between
consecutive points it passed. The points are the file's columns after
`cta` other than `group` (src/snac/trace.h), wherever `group` stands, so older traces read too;
0 is a point not passed.
"""
import csv
import glob
import os
import sys
from collections import defaultdict



def load(directory):
    rows = []
    for path in sorted(glob.glob(os.path.join(directory, "t.rank*"))):
        with open(path, newline="") as f:
            rows.extend(csv.DictReader(f))
    return rows


def summarize(directory):
    rows = load(directory)
    if not rows:
        print(f"{directory}: no t.rank* files")
        return
    columns = list(rows[0].keys())
    points = [c for c in columns[columns.index("cta") + 1:] if c != "group"]
    launches = defaultdict(list)
    for r in rows:
        launches[r["launch_slot"]].append(r)
    # A launch starts at its first CTA entry; a point-to-point launch, which records no entry
    # (src/snac/trace.h), at its first point.
    def start(rs):
        return min(int(r[p]) for r in rs for p in points if int(r[p]) > 0)

    order = sorted(launches, key=lambda s: start(launches[s]))
    print(f"== {directory}")
    previous_exit = None
    for slot in order:
        rs = launches[slot]
        t0 = start(rs)
        gap = "" if previous_exit is None else f", {(t0 - previous_exit) / 1000:.2f} us after the previous launch's last exit"
        print(f"launch slot {slot}: {len(rs)} CTAs{gap}")
        for group in sorted({r["group"] for r in rs}):
            members = [r for r in rs if r["group"] == group]
            cells = []
            for p in points:
                times = [(int(r[p]) - t0) / 1000 for r in members if int(r[p]) > 0]
                cells.append(f"{p} {min(times):.2f}-{max(times):.2f}" if times else f"{p} -")
            print(f"  group {group} ({len(members)} CTAs): " + ", ".join(cells))
        previous_exit = max(int(r["exit"]) for r in rs) or None
    steps = defaultdict(lambda: defaultdict(list))
    for r in rows:
        seen = [p for p in points if int(r[p]) > 0]
        for a, b in zip(seen, seen[1:]):
            steps[r["group"]][f"{a}->{b}"].append((int(r[b]) - int(r[a])) / 1000)
    for group in sorted(steps):
        print(f"  group {group}, mean us between points: " +
              ", ".join(f"{k} {sum(v) / len(v):.2f}" for k, v in steps[group].items()))

if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for d in sys.argv[1:]:
        summarize(d)
