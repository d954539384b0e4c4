#!/usr/bin/env python3
"""Summarizes ab.sh's and ab_sequence.sh's runs in a directory (the argument; default: this
one): per cell and build, each policy's median GB/s, hybrid over the best fixed policy, and the
path hybrid's bytes took (rules)."""
import glob
import json
import os
import statistics
import sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
cells = {}
for f in sorted(glob.glob(os.path.join(here, "[ps][ae][iq]*-*.json"))):
    pair, bs, build = os.path.basename(f)[:-5].split("-")
    res = {x["policy"]: x for x in json.load(open(f))["results"]}
    best = max((p for p in res if p != "hybrid"), key=lambda p: res[p]["gbps_median"])
    h = res["hybrid"]
    by = {k: round(v / 1e6) for k, v in h["counters"]["bytes"].items() if v}
    cells.setdefault((bs, build), []).append(h["gbps_median"] / res[best]["gbps_median"])
    print("%s %-4s %s  %s  hybrid/best(%s) %.2f  hybrid MB %s rules %s" % (
        pair, bs, build, " ".join("%s %.2f" % (p, res[p]["gbps_median"]) for p in res), best,
        h["gbps_median"] / res[best]["gbps_median"], by, h["counters"]["rules"]))
for (bs, build), v in sorted(cells.items()):
    print("%-4s %s: hybrid/best median %.2f of %d %s" % (bs, build, statistics.median(v), len(v), [round(x, 2) for x in v]))
