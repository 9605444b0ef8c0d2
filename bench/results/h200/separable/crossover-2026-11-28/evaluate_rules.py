#!/usr/bin/env python3
"""How much slower than the faster of the two variants a crossover rule's choice is over
sweep/ (248 cases: the sliding pass against the fft_lines passes with a plan's tables),
as geometric mean and worst ratio, for the rule in separable_fft.h before this sweep and
candidate thresholds on kw + kh by output size. Another sweep's folder may be given as
the argument (../chunk-overheads-2026-11-28/crossover-sweep: the same cases after the
sliding pass's chunk-overhead change)."""
import csv
import glob
import math
import os
import sys

HERE = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "sweep")
cases = []
for name in sorted(glob.glob(os.path.join(HERE, "*.csv"))):
    with open(name) as f:
        cases += [r for r in csv.DictReader(f) if r.get("sliding_ms")]


def evaluate(rule):
    logs, worst = [], (1.0, None)
    for r in cases:
        s, f = float(r["sliding_ms"]), float(r["fft_lines_ms"])
        kw, kh = int(r["kw"]), int(r["kh"])
        ow = int(r["width"]) - (kw - 1 if r["mode"] == "valid" else 0)
        oh = int(r["height"]) - (kh - 1 if r["mode"] == "valid" else 0)
        q = (f if rule(kw, kh, ow * oh) else s) / min(s, f)
        logs.append(math.log(q))
        if q > worst[0]:
            worst = (q, f"{r['precision']} {r['mode']} {r['width']}x{r['height']} {kw}x{kh}")
    return math.exp(sum(logs) / len(logs)), worst


def show(name, rule):
    mean, worst = evaluate(rule)
    print(f"{name}: {100 * (mean - 1):.2f} % on average, worst {worst[0]:.2f}x ({worst[1]})")


print(len(cases), "cases")
show("before (150 from 2^20 outputs, else 200)", lambda kw, kh, n: kw + kh >= (150 if n >= 1 << 20 else 200))
for t in (130, 140, 150, 160, 170, 180, 200):
    show(f"kw + kh >= {t} everywhere", lambda kw, kh, n, t=t: kw + kh >= t)
for large in (150, 160):
    for small in (110, 130):
        show(f"{large} from 2^21 outputs, else {small}",
             lambda kw, kh, n, large=large, small=small: kw + kh >= (large if n >= 1 << 21 else small))
show("the rule (140 under 2^19 outputs, 80 under 2^21, else 150)",
     lambda kw, kh, n: kw + kh >= (140 if n < 1 << 19 else 80 if n < 1 << 21 else 150))
for large in (160, 170, 180):
    show(f"the rule with {large} from 2^21 outputs",
         lambda kw, kh, n, large=large: kw + kh >= (140 if n < 1 << 19 else 80 if n < 1 << 21 else large))
