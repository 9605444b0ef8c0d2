#!/usr/bin/env python3
"""Writes tests/golden/scipy_signal_cases.txt: scipy.signal.correlate2d / convolve2d
results on small random cases (odd and even kernels, kernels larger than the image),
for every mode and scipy.signal boundary. tests/test_scipy_golden.cpp checks both the
float64 reference and halconv against them. Rerun after changing the cases:
    .venv/bin/python scripts/make_scipy_golden.py
"""
import pathlib

import numpy as np
import scipy
from scipy import signal

rng = np.random.default_rng(20261122)
shapes = [((7, 9), (2, 2)), ((7, 9), (4, 3)), ((6, 5), (3, 3)), ((8, 5), (1, 4)), ((3, 4), (5, 6)), ((1, 1), (2, 3))]
lines = [f"# scipy {scipy.__version__}: fn mode boundary fill image_h image_w kernel_h kernel_w, then image, kernel, out_h out_w out"]
for (ih, iw), (kh, kw) in shapes:
    for fn in ("correlate2d", "convolve2d"):
        for mode in ("valid", "same", "full"):
            if mode == "valid" and (kh > ih or kw > iw):
                continue
            for boundary in ("fill", "wrap", "symm"):
                image = rng.uniform(-1, 1, (ih, iw))
                kernel = rng.uniform(-1, 1, (kh, kw))
                fill = float(np.round(rng.uniform(-2, 2), 3)) if boundary == "fill" else 0.0
                out = getattr(signal, fn)(image, kernel, mode=mode, boundary=boundary, fillvalue=fill)
                lines.append(f"{fn} {mode} {boundary} {fill!r} {ih} {iw} {kh} {kw}")
                lines.append(" ".join(repr(float(v)) for v in image.ravel()))
                lines.append(" ".join(repr(float(v)) for v in kernel.ravel()))
                lines.append(f"{out.shape[0]} {out.shape[1]} " + " ".join(repr(float(v)) for v in out.ravel()))
path = pathlib.Path(__file__).resolve().parent.parent / "tests" / "golden" / "scipy_signal_cases.txt"
path.write_text("\n".join(lines) + "\n")
print(f"wrote {path} ({(len(lines) - 1) // 4} cases)")
