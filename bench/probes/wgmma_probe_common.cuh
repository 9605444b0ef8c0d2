// Shared by the wgmma separable probes (separable_wgmma_row_probe.cu,
// separable_wgmma_column_probe.cu): error checks, timing, and the float32 -> float16-parts
// helpers their kernels use.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(x)                                                                                    \
    do {                                                                                            \
        cudaError_t e_ = (x);                                                                       \
        if (e_ != cudaSuccess) {                                                                    \
            std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
            std::exit(1);                                                                           \
        }                                                                                           \
    } while (0)

// The median time of `reps` launches after one warm-up, ms.
template <typename Launch>
float median_ms(Launch launch, int reps, cudaStream_t s) {
    std::vector<float> ms;
    cudaEvent_t e0, e1;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    for (int r = 0; r < reps + 1; r++) {
        CHECK(cudaEventRecord(e0, s));
        launch();
        CHECK(cudaEventRecord(e1, s));
        CHECK(cudaEventSynchronize(e1));
        float t = 0;
        CHECK(cudaEventElapsedTime(&t, e0, e1));
        if (r > 0) {
            ms.push_back(t);
        }
    }
    CHECK(cudaGetLastError());
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

__device__ __forceinline__ uint32_t smem_address(const void *p) {
    return uint32_t(__cvta_generic_to_shared(p));
}

// A k-major operand in 128-byte-swizzled atoms (8 rows of 64 halfs, 1024 bytes; SBO 1024).
__device__ __forceinline__ uint64_t sw128_descriptor(uint32_t start) {
    return uint64_t((start >> 4) & 0x3fff) | uint64_t(1) << 16 | uint64_t(1024 >> 4) << 32 | uint64_t(1) << 62;
}

// 2^e as a float: built from its bits where 2^e is a normal float, else ldexpf.
__device__ __forceinline__ float pow2(int e) {
    return e >= -126 && e <= 127 ? __int_as_float((e + 127) << 23) : ldexpf(1.0f, e);
}

// split_f32::split_in_place of two scaled values, as two half2 registers (hi, mid): one
// paired conversion for each part instead of one per value and part.
__device__ __forceinline__ void split_pair(float a, float b, uint32_t &hi, uint32_t &mid) {
    const __half2 h = __floats2half2_rn(a, b);
    const float2 back = __half22float2(h);
    const __half2 m = __floats2half2_rn(a - back.x, b - back.y);
    hi = *reinterpret_cast<const uint32_t *>(&h);
    mid = *reinterpret_cast<const uint32_t *>(&m);
}

// The taps' Toeplitz block as wgmma register fragments, both parts: KS k16 slices of
// mma.m16n8k16's A per warp (rows m = 16 warp + g (+ 8), columns k = 16 ks + 2 q (+ 1) (+ 8)),
// value(m, k) giving A(m, k) as a float32. (The row probe's form 5 writes the same loop out:
// through this function its K = 127 build spills 36 bytes and ran 9 % slower, so the
// measured code stays as it was.)
template <int KS, typename Value>
__device__ __forceinline__ void toeplitz_fragments(uint32_t (&hi)[KS][4], uint32_t (&mid)[KS][4], int warp, int g,
                                                   int q, Value value) {
#pragma unroll
    for (int ks = 0; ks < KS; ks++) {
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int m = 16 * warp + g + (r % 2) * 8, k = 16 * ks + 2 * q + (r / 2) * 8;
            split_pair(value(m, k), value(m, k + 1), hi[ks][r], mid[ks][r]);
        }
    }
}
