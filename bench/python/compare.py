"""halconv against SciPy and CuPy from Python on one image: the README's Python table.

    python bench/python/compare.py [--size 2048] [--kernel 15] [--repeats 20]

Each row: median wall time of `repeats` calls after one warm-up, for correlate2d (mode same,
boundary symm, float32) and for a Gaussian (sigma 4, scipy.ndimage's definition). GPU rows
(CuPy arrays in and out, synchronized after each call) where CuPy and a CUDA device exist.
"""

import argparse
import statistics
import time

import numpy as np
import scipy.ndimage
import scipy.signal

import halconv


def median_ms(call, repeats, sync=lambda: None):
    call()
    sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        sync()
        times.append(time.perf_counter() - start)
    return 1e3 * statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size", type=int, default=2048)
    parser.add_argument("--kernel", type=int, default=15)
    parser.add_argument("--sigma", type=float, default=4.0)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--skip-scipy-correlate", action="store_true", help="SciPy's direct sum is slow at large K")
    a = parser.parse_args()
    rng = np.random.default_rng(0)
    image = rng.random((a.size, a.size), dtype=np.float32)
    kernel = rng.random((a.kernel, a.kernel), dtype=np.float32)
    rows = []

    def row(library, device, what, ms):
        rows.append((library, device, what, ms))

    corr = f"correlate2d {a.kernel}x{a.kernel}"
    gauss = f"gaussian sigma {a.sigma:g}"
    if not a.skip_scipy_correlate:
        row("scipy.signal", "cpu", corr,
            median_ms(lambda: scipy.signal.correlate2d(image, kernel, "same", "symm"), max(1, a.repeats // 10)))
    row("scipy.ndimage", "cpu", gauss, median_ms(lambda: scipy.ndimage.gaussian_filter(image, a.sigma), a.repeats))
    row("halconv", "cpu", corr,
        median_ms(lambda: halconv.correlate2d(image, kernel, "same", "symm", device="cpu"), a.repeats))
    row("halconv", "cpu", gauss, median_ms(lambda: halconv.gaussian_filter(image, a.sigma, device="cpu"), a.repeats))
    if halconv.cuda_info()["devices"]:
        try:
            import cupy as cp
            import cupyx.scipy.ndimage
            import cupyx.scipy.signal
        except ImportError:
            cp = None
        if cp is not None:
            g = cp.asarray(image)
            sync = cp.cuda.Device().synchronize
            row("cupyx.scipy.signal", "cuda", corr,
                median_ms(lambda: cupyx.scipy.signal.correlate2d(g, cp.asarray(kernel), "same", "symm"), a.repeats,
                          sync))
            row("cupyx.scipy.ndimage", "cuda", gauss,
                median_ms(lambda: cupyx.scipy.ndimage.gaussian_filter(g, a.sigma), a.repeats, sync))
            row("halconv (CuPy arrays)", "cuda", corr,
                median_ms(lambda: halconv.correlate2d(g, kernel, "same", "symm"), a.repeats, sync))
            row("halconv (CuPy arrays)", "cuda", gauss,
                median_ms(lambda: halconv.gaussian_filter(g, a.sigma), a.repeats, sync))
            plan = halconv.Plan(image.shape, kernel, "same", "symm", dtype=np.float32)
            row("halconv Plan (CuPy arrays)", "cuda", corr, median_ms(lambda: plan(g), a.repeats, sync))
        row("halconv (NumPy, copies)", "cuda", corr,
            median_ms(lambda: halconv.correlate2d(image, kernel, "same", "symm", device="cuda"), a.repeats))
    print(f"{a.size}x{a.size} float32, median of {a.repeats} calls (ms)")
    print("| library | device | filter | ms |")
    print("| --- | --- | --- | ---: |")
    for library, device, what, ms in rows:
        print(f"| {library} | {device} | {what} | {ms:.3f} |")


if __name__ == "__main__":
    main()
