#!/usr/bin/env python3
"""CPU peers of halconv's CPU algorithms, timed the way `halconv bench-quick --device cpu`
times halconv (wall time per call, median of --reps after one warm-up, float32, mode
same): OpenCV's filter2D (reflect border, which switches to a DFT for large kernels) and
GaussianBlur, SciPy's fftconvolve (zero padding) and correlate2d (direct, 'symm').

    python3 bench/cpu_peers.py --sizes 2048 --kernels 3,15,31,63 --threads 2

Needs numpy, scipy and opencv-python-headless (not part of halconv's build).
"""
import argparse
import os
import statistics
import time


def median_ms(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="2048")
    ap.add_argument("--kernels", default="3,15,31,63")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--sigma", type=float, default=5.0, help="GaussianBlur's sigma")
    ap.add_argument("--direct-max-k", type=int, default=15,
                    help="largest K timed with scipy.signal.correlate2d (it is O(K^2) and single-threaded)")
    args = ap.parse_args()
    # Thread counts before the libraries start their pools.
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[var] = str(args.threads)
    import cv2
    import numpy as np
    import scipy
    import scipy.signal

    cv2.setNumThreads(args.threads)
    rng = np.random.default_rng(2026)
    print(f"OpenCV {cv2.__version__}, SciPy {scipy.__version__}, {args.threads} threads, float32, mode same; "
          f"wall ms per call, median of {args.reps}")
    print(f"{'peer':<28} {'size':>6} {'K':>4} {'ms':>10}")
    for size in (int(s) for s in args.sizes.split(",")):
        img = rng.random((size, size), dtype=np.float32)
        for k in (int(s) for s in args.kernels.split(",")):
            ker = rng.random((k, k), dtype=np.float32)
            rows = [("cv2.filter2D reflect", lambda: cv2.filter2D(img, -1, ker, borderType=cv2.BORDER_REFLECT)),
                    ("scipy.signal.fftconvolve", lambda: scipy.signal.fftconvolve(img, ker, mode="same"))]
            if k <= args.direct_max_k:
                rows.append(("scipy.signal.correlate2d", lambda: scipy.signal.correlate2d(img, ker, mode="same",
                                                                                          boundary="symm")))
            for name, fn in rows:
                print(f"{name:<28} {size:>6} {k:>4} {median_ms(fn, args.reps):>10.3f}", flush=True)
        ksize = 2 * int(np.ceil(3 * args.sigma)) + 1
        ms = median_ms(lambda: cv2.GaussianBlur(img, (ksize, ksize), args.sigma, borderType=cv2.BORDER_REFLECT),
                       args.reps)
        print(f"{'cv2.GaussianBlur s=' + str(args.sigma):<28} {size:>6} {ksize:>4} {ms:>10.3f}", flush=True)


if __name__ == "__main__":
    main()
