// Feasibility probe, not library code: the separable filter as two passes of 1D overlap-save
// FFTs along lines (rows, then columns), each pass one kernel that reads its blocks of the
// line through the boundary rule, transforms them (fft_line.cuh), multiplies by the 1D
// kernel's spectrum, transforms back and writes the block's outputs. Two real lines ride in
// one complex line (rows a and a + 1 as real and imaginary parts; columns 2c and 2c + 1 as
// one float2 sample): the kernel is real, so its circular correlation keeps them apart, and
// no real-transform untangling is needed. No non-finite handling (the library form would
// need the fft variant's per-block flag and direct fallback).
// Build: nvcc -Iruntime_kernels -isystem <halide>/include -O3 -std=c++20 -arch=sm_90 <this> -o probe
// Run:   probe WIDTH HEIGHT BOUNDARY [CASE K]  -> per K and line lengths (rows / columns, points
//        per thread): time of each pass and both, the largest error against float64 separable
//        sums at sampled outputs, relative to sum|w||x|. bench/results/h100/separable/fft-lines-2026-11-28/
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "bands/band_slab.h"
#include "fft/fft_line.cuh"

#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

using namespace halconv::rk;
using namespace halconv::rk::fft_line;

namespace {

// Points per thread of the row transforms (the column ones are each case's).
constexpr int row_points = 8;

template <int M>
__host__ __device__ constexpr int row_lines() {
    constexpr int T = Shape<M, row_points>::T;
    return T >= 256 ? 1 : 256 / T;
}

struct Pass {
    const float *in;
    float *out;
    int width, height;  // of the image (same mode: the output's too)
    int64_t stride;     // elements between rows, in and out
    int anchor;         // taps before the output sample
    int step;           // outputs per block: M - K + 1
    int boundary;
    const float2 *spectrum;  // conj(FFT(taps padded to M)) / M
    const float2 *twiddles;
};

// Rows 2 l and 2 l + 1 (l = blockIdx.y * lines + the thread's line), the block of `step`
// outputs from x0 = blockIdx.x * step.
template <int M, int Points>
__global__ void __launch_bounds__(row_lines<M>() * Shape<M, Points>::T) rows_pass(Pass p) {
    using Sh = Shape<M, Points>;
    __shared__ float2 shared[row_lines<M>() * Sh::stride];
    const int line = int(threadIdx.x) / Sh::T, j = int(threadIdx.x) % Sh::T;
    const int ya = 2 * (int(blockIdx.y) * row_lines<M>() + line), yb = ya + 1;
    const int x0 = int(blockIdx.x) * p.step;
    const bool a_in = ya < p.height, b_in = yb < p.height;
    const float *ra = p.in + int64_t(a_in ? ya : 0) * p.stride, *rb = p.in + int64_t(b_in ? yb : 0) * p.stride;
    float2 v[Sh::S];
    const bool inside = x0 - p.anchor >= 0 && x0 - p.anchor + M <= p.width;
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        const int x = x0 - p.anchor + j + Sh::T * m;
        const int sx = inside ? x : int(band_source_index(x, p.width, p.boundary));
        v[m] = make_float2(a_in && sx >= 0 ? __ldg(ra + sx) : 0.0f, b_in && sx >= 0 ? __ldg(rb + sx) : 0.0f);
    }
    LineBarrier<Sh::T> barrier;
    float2 *sh = shared + line * Sh::stride;
    forward<M, Points, true>(v, sh, j, p.twiddles, barrier);
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        v[m] = conj(cmul(v[m], __ldg(&p.spectrum[j + Sh::T * m])));
    }
    forward<M, Points, true>(v, sh, j, p.twiddles, barrier);
    float *oa = p.out + int64_t(ya) * p.stride, *ob = p.out + int64_t(yb) * p.stride;
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        const int n = j + Sh::T * m, x = x0 + n;
        if (n < p.step && x < p.width) {
            if (a_in) {
                oa[x] = v[m].x;
            }
            if (b_in) {
                ob[x] = -v[m].y;
            }
        }
    }
}

template <int M, int Points>
__host__ __device__ constexpr int column_group() {
    constexpr int by_threads = 512 / Shape<M, Points>::T;
    return by_threads < 2 ? 2 : by_threads > 16 ? 16 : by_threads;
}

// Columns 2 c and 2 c + 1 (c = blockIdx.x * C + the thread's column), the block of `step`
// outputs from y0 = blockIdx.y * step; the width even (probe).
template <int M, int Points>
__global__ void __launch_bounds__(column_group<M, Points>() * Shape<M, Points>::T) columns_pass(Pass p) {
    using Sh = Shape<M, Points>;
    constexpr int C = column_group<M, Points>();
    extern __shared__ float2 dyn[];
    const int c = int(threadIdx.x) % C, j = int(threadIdx.x) / C;
    const int pair = int(blockIdx.x) * C + c;
    const bool in = 2 * pair < p.width;
    const int y0 = int(blockIdx.y) * p.step;
    const float2 *src = reinterpret_cast<const float2 *>(p.in) + pair;
    const int64_t pitch = p.stride / 2;
    const bool inside = y0 - p.anchor >= 0 && y0 - p.anchor + M <= p.height;
    float2 v[Sh::S];
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        const int y = y0 - p.anchor + j + Sh::T * m;
        const int sy = inside ? y : int(band_source_index(y, p.height, p.boundary));
        v[m] = in && sy >= 0 ? __ldg(src + int64_t(sy) * pitch) : make_float2(0.0f, 0.0f);
    }
    float2 *sh = dyn + c * Sh::stride;
    forward<M, Points, true>(v, sh, j, p.twiddles, BlockBarrier{});
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        v[m] = conj(cmul(v[m], __ldg(&p.spectrum[j + Sh::T * m])));
    }
    forward<M, Points, true>(v, sh, j, p.twiddles, BlockBarrier{});
    float2 *dst = reinterpret_cast<float2 *>(p.out) + pair;
    if (in) {
#pragma unroll
        for (int m = 0; m < Sh::S; m++) {
            const int n = j + Sh::T * m, y = y0 + n;
            if (n < p.step && y < p.height) {
                dst[int64_t(y) * pitch] = make_float2(v[m].x, -v[m].y);
            }
        }
    }
}

// conj(DFT of the taps zero-padded to M) / M, in double.
std::vector<float2> spectrum_of(const std::vector<double> &w, int M) {
    std::vector<float2> s(M);
    for (int k = 0; k < M; k++) {
        double re = 0, im = 0;
        for (size_t t = 0; t < w.size(); t++) {
            const double a = -2.0 * M_PI * double(k) * double(t) / M;
            re += w[t] * cos(a);
            im += w[t] * sin(a);
        }
        s[k] = make_float2(float(re / M), float(-im / M));
    }
    return s;
}

template <typename F>
float median_ms(F &&launch) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    for (int r = 0; r < 21; r++) {
        CK(cudaEventRecord(a));
        launch();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r > 0) t.push_back(ms);
    }
    CK(cudaGetLastError());
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

struct Setup {
    int width, height, boundary;
    float *image, *mid, *out;
    float2 *twiddles;
    std::vector<float> host;
};

template <int MR, int PR, int MC, int PC>
void run_case(Setup &s, int K) {
    if (K > MR || K > MC || K > s.width || K > s.height) return;
    std::vector<double> w(K);
    double sum = 0;
    for (int t = 0; t < K; t++) sum += w[t] = exp(-0.5 * pow((t - (K - 1) / 2.0) / (K / 6.0), 2));
    for (auto &x : w) x /= sum;
    const auto sr = spectrum_of(w, MR), sc = spectrum_of(w, MC);
    float2 *dsr, *dsc;
    CK(cudaMalloc(&dsr, MR * sizeof(float2)));
    CK(cudaMalloc(&dsc, MC * sizeof(float2)));
    CK(cudaMemcpy(dsr, sr.data(), MR * sizeof(float2), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dsc, sc.data(), MC * sizeof(float2), cudaMemcpyHostToDevice));
    Pass rp{s.image, s.mid, s.width, s.height, s.width, (K - 1) / 2, MR - K + 1, s.boundary, dsr, s.twiddles};
    Pass cp{s.mid, s.out, s.width, s.height, s.width, (K - 1) / 2, MC - K + 1, s.boundary, dsc, s.twiddles};
    using SR = Shape<MR, PR>;
    using SC = Shape<MC, PC>;
    constexpr int CG = column_group<MC, PC>();
    const dim3 rg((s.width + rp.step - 1) / rp.step, (s.height + 2 * row_lines<MR>() - 1) / (2 * row_lines<MR>()));
    const dim3 cg((s.width / 2 + CG - 1) / CG, (s.height + cp.step - 1) / cp.step);
    const size_t csh = size_t(CG) * SC::stride * sizeof(float2);
    CK(cudaFuncSetAttribute(columns_pass<MC, PC>, cudaFuncAttributeMaxDynamicSharedMemorySize, int(csh)));
    const int rt = row_lines<MR>() * SR::T, ct = CG * SC::T;
    const float tr = median_ms([&] { rows_pass<MR, PR><<<rg, rt>>>(rp); });
    const float tc = median_ms([&] { columns_pass<MC, PC><<<cg, ct, csh>>>(cp); });
    const float both = median_ms([&] {
        rows_pass<MR, PR><<<rg, rt>>>(rp);
        columns_pass<MC, PC><<<cg, ct, csh>>>(cp);
    });
    // Check sampled outputs against float64 sums (the separable filter, same mode).
    std::vector<float> out(size_t(s.width) * s.height);
    CK(cudaMemcpy(out.data(), s.out, out.size() * sizeof(float), cudaMemcpyDeviceToHost));
    std::mt19937 rng(7);
    double worst = 0;
    const int a = (K - 1) / 2;
    for (int q = 0; q < 2000; q++) {
        int x = int(rng() % s.width), y = int(rng() % s.height);
        if (q < 8) {
            x = (q & 1) ? s.width - 1 : 0;
            y = (q & 2) ? s.height - 1 : 0;
        }
        double acc = 0, mag = 0;
        for (int i = 0; i < K; i++) {
            const int64_t sy = band_source_index(y - a + i, s.height, s.boundary);
            double row = 0, rmag = 0;
            for (int t = 0; t < K; t++) {
                const int64_t sx = band_source_index(x - a + t, s.width, s.boundary);
                const double v = sx < 0 || sy < 0 ? 0.0 : s.host[size_t(sy) * s.width + sx];
                row += w[t] * v;
                rmag += std::fabs(w[t] * v);
            }
            acc += w[i] * row;
            mag += std::fabs(w[i]) * rmag;
        }
        worst = std::max(worst, std::fabs(out[size_t(y) * s.width + x] - acc) / std::max(mag, 1e-30));
    }
    printf("%dx%d,%d,%d/%d,%d/%d,%.4f,%.4f,%.4f,%.2e\n", s.width, s.height, K, MR, PR, MC, PC, tr, tc, both, worst);
    CK(cudaFree(dsr));
    CK(cudaFree(dsc));
}

}  // namespace

int main(int argc, char **argv) {
    Setup s{};
    s.width = argc > 1 ? atoi(argv[1]) : 4096;
    s.height = argc > 2 ? atoi(argv[2]) : s.width;
    s.boundary = argc > 3 ? atoi(argv[3]) : 2;
    const size_t n = size_t(s.width) * s.height;
    s.host.resize(n);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(0.f, 1.f);
    for (auto &v : s.host) v = d(rng);
    CK(cudaMalloc(&s.image, n * sizeof(float)));
    CK(cudaMalloc(&s.mid, n * sizeof(float)));
    CK(cudaMalloc(&s.out, n * sizeof(float)));
    CK(cudaMalloc(&s.twiddles, kTableSize * sizeof(float2)));
    fill_twiddle_table<<<kTableSize / 256, 256>>>(s.twiddles);
    CK(cudaMemcpy(s.image, s.host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    printf("size,K,M/points_rows,M/points_columns,rows_ms,columns_ms,both_ms,max_rel_error\n");
    // probe SIZE HEIGHT BOUNDARY [CASE K]: one case (for a profiler), else every case and K.
    const int only = argc > 5 ? atoi(argv[4]) : -1;
    const std::vector<int> ks = argc > 5 ? std::vector<int>{atoi(argv[5])} : std::vector<int>{15, 31, 63, 127, 193};
    for (int K : ks) {
        if (only < 0 || only == 0) run_case<256, 8, 256, 16>(s, K);
        if (only < 0 || only == 1) run_case<512, 8, 512, 16>(s, K);
        if (only < 0 || only == 2) run_case<1024, 8, 1024, 16>(s, K);
        if (only < 0 || only == 3) run_case<1024, 8, 1024, 8>(s, K);
        if (only < 0 || only == 4) run_case<2048, 8, 1024, 16>(s, K);
    }
    return 0;
}
