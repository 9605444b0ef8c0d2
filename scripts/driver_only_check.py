# Run by scripts/check-driver-only with the CUDA toolkit's libraries hidden (the driver only):
# halconv must import, run on the GPU, refuse exactly what needs cuBLAS / cuFFT with a typed
# error, and Auto must pass over those.
import numpy as np
import halconv

info = halconv.cuda_info()
print("device:", info["devices"][0]["name"] if info["devices"] else None)
libs = {lib["name"]: lib for lib in info["libraries"]}
for name, lib in libs.items():
    print(name, "->", lib["path"] or "missing:", lib["unavailable_reason"][:160])
assert libs["cuFFT"]["unavailable_reason"] and libs["cuBLAS"]["unavailable_reason"], "toolkit not hidden"

rng = np.random.default_rng(7)
img = rng.random((300, 257), dtype=np.float32)
k = rng.random((41, 41), dtype=np.float32)
ref = halconv.correlate2d(img.astype(np.float64), k.astype(np.float64), mode="same", device="cpu")
for alg in ("auto", "im2tensor_fused", "separable", "sliding"):
    try:
        out = halconv.correlate2d(img, k, mode="same", algorithm=alg, device="cuda")
        print(f"correlate2d {alg} on cuda: max |err| {np.abs(out - ref).max():.2e}")
    except halconv.Error as e:
        print(f"correlate2d {alg}: {type(e).__name__}: {str(e)[:150]}")
plan = halconv.Plan(img.shape, k, mode="same", device="cuda")
print("Plan auto K=41 dispatch:", plan.dispatch)
try:
    halconv.correlate2d(img, k, mode="same", algorithm="fft", device="cuda")
    raise SystemExit("FAIL: fft ran without cuFFT")
except halconv.UnsupportedError as e:
    print("fft refused (UnsupportedError):", str(e)[:300])

stack = rng.random((200, 150, 8), dtype=np.float32)
filters = rng.random((5, 3, 3, 8), dtype=np.float32)
try:
    halconv.multichannel_correlate2d(stack, filters, algorithm="im2col", device="cuda")
    raise SystemExit("FAIL: im2col f32 ran without cuBLAS")
except halconv.UnsupportedError as e:
    print("im2col f32 refused (UnsupportedError):", str(e)[:300])
a = halconv.multichannel_correlate2d(stack, filters, device="cuda")
b = halconv.multichannel_correlate2d(stack.astype(np.float64), filters.astype(np.float64), device="cpu")
print(f"multichannel auto f32 on cuda (direct): max |err| {np.abs(a - b).max():.2e}")
h = halconv.multichannel_correlate2d(stack.astype(np.float16), filters.astype(np.float16), algorithm="implicit_gemm",
                                     device="cuda")
print("implicit_gemm f16 (no cuBLAS needed):", h.shape, h.dtype)
print("DRIVER-ONLY OK")
