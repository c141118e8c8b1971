#!/usr/bin/env python3
"""A/B table of snac_bench runs of several builds made in one device call.

Usage: ab_table.py PREFIX BUILD [BUILD ...]

Reads PREFIX<build>_<n>/snac.csv (several runs of a build, e.g. lab_b21_1, lab_b21_4), takes
per (collective, size) the fastest run of each build, and prints the us per call of every
build and the speedup of each over the first (above 1: faster than the first), then the
geometric mean of those speedups per collective. Rows with wrong elements are counted.
"""
import collections
import csv
import glob
import math
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    prefix, builds = sys.argv[1], sys.argv[2:]
    times = collections.defaultdict(lambda: collections.defaultdict(list))
    wrong = 0
    for d in sorted(glob.glob(prefix + "*/snac.csv")):
        d = d[: -len("/snac.csv")]
        build = d[len(prefix):].split("_")[0]
        for row in csv.DictReader(open(d + "/snac.csv")):
            times[(row["collective"], int(row["bytes"]))][build].append(float(row["us_per_call"]))
            wrong += row["wrong"] not in ("0", "")
    print("rows with wrong elements:", wrong)
    print("%-18s %9s " % ("collective", "bytes") + " ".join("%9s" % b for b in builds) +
          "   speedup over " + builds[0])
    speedups = collections.defaultdict(lambda: collections.defaultdict(list))
    for (coll, size), by in sorted(times.items()):
        best = {b: min(by[b]) for b in builds if by[b]}
        if builds[0] not in best:
            continue
        print("%-18s %9d " % (coll, size) + " ".join("%9.2f" % best.get(b, float("nan")) for b in builds) +
              "   " + " ".join("%5.3f" % (best[builds[0]] / best[b]) for b in builds[1:] if b in best))
        for b in builds[1:]:
            if b in best:
                speedups[coll][b].append(best[builds[0]] / best[b])
    for coll, by in speedups.items():
        print("geomean", coll, " ".join("%s %.3f" % (b, math.exp(sum(map(math.log, x)) / len(x))) for b, x in by.items()))


if __name__ == "__main__":
    main()
