// Shared by the wgmma separable probes (separable_wgmma_row_probe.cu,
// separable_wgmma_column_probe.cu): error checks, timing, and the float32 -> float16-parts
// helpers their kernels use.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <type_traits>
#include <vector>

#include "common/mma_sync.cuh"
#include "common/split_f32.h"
#include "common/wgmma.cuh"

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

using halconv::rk::split_f32::pow2;
using halconv::rk::split_f32::split_pair;

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

// The depth of the taps' Toeplitz block for 64 outputs: 64 + K - 1 rounded up to a k16 slice.
constexpr int toeplitz_depth(int k) {
    return (64 + k - 1 + 15) / 16 * 16;
}

// f(std::integral_constant<int, KP>) for the run-time kp among KPs; -1 where kp is not one.
template <int... KPs, typename F>
float for_kp(int kp, F &&f) {
    float t = -1.0f;
    (void)((kp == KPs ? (t = f(std::integral_constant<int, KPs>{}), true) : false) || ...);
    return t;
}

// The probes' taps: a Gaussian about K / 6 wide, each tap moved by up to 10 % (drawn from rng
// after the image, so that a probe's data stay as they were).
inline std::vector<float> probe_taps(int k, std::mt19937 &rng) {
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    std::vector<float> taps(k);
    for (int i = 0; i < k; i++) {
        taps[i] = std::exp(-0.5f * float((i - k / 2) * (i - k / 2)) / float(k * k / 36 + 1)) * (1.0f + 0.1f * uni(rng));
    }
    return taps;
}

// The exponent of the taps' power-of-two scale (split_f32::scale_exponent of the largest |tap|).
inline int taps_exponent(const std::vector<float> &taps) {
    float largest = 0;
    for (float v : taps) {
        largest = std::max(largest, std::fabs(v));
    }
    return halconv::rk::split_f32::scale_exponent(largest);
}

// Outputs against float64 sums, bound (K + 4) 2^-24 sum|terms|: the first five outside it
// printed, all counted, the largest ratio kept.
struct BoundCheck {
    int k;
    int64_t bad = 0;
    double worst = 0;
    void add(int x, int y, double got, double want, double magnitude) {
        const double ratio = std::fabs(got - want) / ((k + 4) * std::ldexp(1.0, -24) * magnitude + 1e-300);
        if (!(ratio <= 1.0)) {
            if (bad < 5) {
                std::printf("  (%d, %d): %.9g, want %.9g (ratio %.3g)\n", x, y, got, want, ratio);
            }
            bad++;
        }
        if (ratio == ratio) {
            worst = std::max(worst, ratio);
        }
    }
};

// The memory floor of a pass: a copy of w x h floats (rows `in_pitch` and `out_pitch` apart).
__global__ void copy_rows(const float *in, int64_t in_pitch, float *out, int64_t out_pitch, int w, int h) {
    const int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
    if (i < int64_t(w) * h / 4) {
        const int64_t e = i * 4, y = e / w, x = e % w;
        *reinterpret_cast<float4 *>(out + y * out_pitch + x) =
            __ldg(reinterpret_cast<const float4 *>(in + y * in_pitch + x));
    }
}
inline float copy_ms(const float *in, int64_t in_pitch, float *out, int64_t out_pitch, int w, int h, cudaStream_t s) {
    const int64_t n4 = int64_t(w) * h / 4;
    return median_ms([&] { copy_rows<<<unsigned((n4 + 255) / 256), 256, 0, s>>>(in, in_pitch, out, out_pitch, w, h); },
                     20, s);
}
