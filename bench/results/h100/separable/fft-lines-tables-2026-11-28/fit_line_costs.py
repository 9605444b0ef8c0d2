#!/usr/bin/env python3
"""The fft_lines passes' cost per transformed point of each line length (separable_fft.h,
fft_point_cost), fitted to step2-line-lengths/: 4096^2 f32, each length forced on one axis
(PROBE_ROWS_M / PROBE_COLS_M in a probe build of the passes) with the other axis at its own
choice. Model: time = a + sum over the axes of (blocks x M / 4096) x cost(axis, M)."""
import csv
import os

import numpy as np

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "step2-line-lengths")
LENGTHS = [256, 512, 1024, 2048, 4096]
KERNELS = [31, 95, 127, 193]
# The other axis's length in each run: the rule of the build that ran (blocks x M x passes).
ROW_CHOICE = 512
COLUMN_CHOICE = {31: 256, 95: 256, 127: 1024, 193: 1024}


def points(m, k, outputs=4096):
    step = m - k + 1
    return -(-outputs // step) * m / outputs


def load(name):
    with open(os.path.join(HERE, name)) as f:
        return {int(r["kw"]): float(r["fft_lines_ms"]) for r in csv.DictReader(f)}


rows, times = [], []
for axis in ("rows", "cols"):
    for m in LENGTHS:
        measured = load(f"{axis}-{m}.csv")
        for k in KERNELS:
            if k not in measured:
                continue
            mr = m if axis == "rows" else ROW_CHOICE
            mc = m if axis == "cols" else COLUMN_CHOICE[k]
            row = [0.0] * (2 * len(LENGTHS) + 1)
            row[LENGTHS.index(mr)] += points(mr, k)
            row[len(LENGTHS) + LENGTHS.index(mc)] += points(mc, k)
            row[-1] = 1.0
            rows.append(row)
            times.append(measured[k])
a, b = np.array(rows), np.array(times)
x, *_ = np.linalg.lstsq(a, b, rcond=None)
print("rows    ms per point-image:", np.round(x[:5], 4), " relative:", np.round(x[:5] / x[0], 3))
print("columns ms per point-image:", np.round(x[5:10], 4), " relative:", np.round(x[5:10] / x[5], 3))
print("a:", round(x[-1], 4), "ms; largest relative residual:", round(float(np.max(np.abs(a @ x - b) / b)), 3))
