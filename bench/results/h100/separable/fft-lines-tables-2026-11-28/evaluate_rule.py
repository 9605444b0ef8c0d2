#!/usr/bin/env python3
"""How much slower than the faster of the two variants the separable entry's choice is
(separable_fft.h, fft_lines_preferred) over step3-sweep/ (the final passes, 248 cases),
against single thresholds on kw + kh: geometric mean and worst ratio."""
import csv
import glob
import math
import os

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "step3-sweep")
cases = []
for name in sorted(glob.glob(os.path.join(HERE, "*.csv"))):
    with open(name) as f:
        cases += list(csv.DictReader(f))


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


print(len(cases), "cases")
for t in (150, 200):
    mean, worst = evaluate(lambda kw, kh, n, t=t: kw + kh >= t)
    print(f"kw + kh >= {t}: {100 * (mean - 1):.1f} % on average, worst {worst[0]:.2f}x ({worst[1]})")
mean, worst = evaluate(lambda kw, kh, n: kw + kh >= (150 if n >= 1 << 20 else 200))
print(f"the rule (150 from 2^20 outputs, else 200): {100 * (mean - 1):.1f} % on average, "
      f"worst {worst[0]:.2f}x ({worst[1]})")
