// Power-of-two complex FFTs of one line (a row or a column) held by a group of threads,
// the building block of the fused overlap-save kernels (fft_overlap_save.cu).
//
// A line of N points (N = 2^n, 2 <= N <= 4096) belongs to T = N / S threads of S points
// each (S = 2^s <= 16 chosen by the caller, at most N): thread j holds point j + T m in
// v[m] (the "canonical" layout), before and after the transform. That layout is coalesced for rows (consecutive j,
// consecutive addresses) and lets a forward and an inverse transform follow each other in registers.
//
// The transform is Stockham's self-sorting formulation (natural order in and out, no
// bit reversal): passes of radix S (the last one of radix N / S^k when N is not a power
// of S); pass p with span Ns (the product of the radices before it) takes
// butterfly b's points b + r N / R, multiplies point r by w^(r (b mod Ns)) with
// w = exp(-2 pi i / (Ns R)), applies an R-point DFT in registers and puts output r at
// (b / Ns) Ns R + (b mod Ns) + r Ns. The first pass reads registers and the last one
// leaves its outputs there; between passes the points go through shared memory, padded by
// one point in 16 so that the strided stores of the first pass do not conflict on banks.
// Lines held by one warp wait only for that warp at an exchange (LineBarrier).
//
// Twiddles come from a table of exp(-2 pi i k / 4096), k < 4096, computed in double
// precision (fft_twiddle_table), so that every twiddle is correctly rounded; or from the
// same values laid out pass by pass (PassTables, fft_line_plan.h), which a warp reads in
// contiguous runs instead of gathering them.
#pragma once

#include <cuda_runtime.h>

#include "fft/fft_line_plan.h"

namespace halconv::rk::fft_line {

__device__ __forceinline__ float2 operator+(float2 a, float2 b) {
    return make_float2(a.x + b.x, a.y + b.y);
}
__device__ __forceinline__ float2 operator-(float2 a, float2 b) {
    return make_float2(a.x - b.x, a.y - b.y);
}
__device__ __forceinline__ float2 operator*(float2 a, float s) {
    return make_float2(a.x * s, a.y * s);
}
__device__ __forceinline__ float2 cmul(float2 a, float2 b) {
    return make_float2(a.x * b.x - a.y * b.y, a.x * b.y + a.y * b.x);
}
__device__ __forceinline__ float2 conj(float2 a) {
    return make_float2(a.x, -a.y);
}
// i a
__device__ __forceinline__ float2 times_i(float2 a) {
    return make_float2(-a.y, a.x);
}

// Points per thread (at most `Points`) and threads per line for a line of N points.
template <int N, int Points = 16>
struct Shape {
    static_assert(N >= 2 && N <= kTableSize && (N & (N - 1)) == 0, "N is a power of two in [2, 4096]");
    static_assert(Points >= 2 && Points <= 16 && (Points & (Points - 1)) == 0, "2, 4, 8 or 16 points per thread");
    static constexpr int S = N < Points ? N : Points;
    static constexpr int T = N / S;
    // Shared-memory points of one line: one pad point per 16, and 4 more so that the
    // lines of a block (columns side by side) start on different banks.
    static constexpr int stride = N + N / 16 + 4;
};

// Points between the lines of a block whose half-warps each span `lines` of them (16 /
// lines points of each, consecutive or a pad apart): a line's points with the pad (one in
// 16), then max(1, 16 / lines) more, so that a half-warp's 64-bit accesses fall on 32
// distinct banks (Shape's 4 do that only for 4 lines).
__host__ __device__ constexpr int bank_spread_stride(int n, int lines) {
    return n + n / 16 + (lines >= 16 ? 1 : 16 / lines);
}

// The barrier of the T threads that hold one line, between the passes' exchanges: the
// warp's when they fit in one (lines of fewer threads share it, and every thread of the
// warp reaches each barrier), so that the block's other lines go on; else the block's.
// (Named barriers of the line's warps measured 5-8 % slower than __syncthreads on the
// H100, even where the line is the whole block.)
template <int T>
struct LineBarrier {
    __device__ __forceinline__ void sync() const {
        if constexpr (T <= 32) {
            __syncwarp();
        } else {
            __syncthreads();
        }
    }
};
// The whole block's barrier, for lines whose threads are spread over its warps.
struct BlockBarrier {
    __device__ __forceinline__ void sync() const { __syncthreads(); }
};

// Entry k of the twiddle table: exp(-2 pi i k / kTableSize), rounded once from double precision.
__device__ inline float2 table_twiddle(int k) {
    double s, c;
    sincospi(-2.0 * double(k) / double(kTableSize), &s, &c);
    return make_float2(float(c), float(s));
}
// The twiddle table (kTableSize entries). Launch with kTableSize threads.
static __global__ void fill_twiddle_table(float2 *table) {
    const int k = int(blockIdx.x * blockDim.x + threadIdx.x);
    if (k < kTableSize) {
        table[k] = table_twiddle(k);
    }
}

__device__ __forceinline__ int padded(int i) {
    return i + (i >> 4);
}

// a * exp(-2 pi i e / 16) for a compile-time e (after unrolling): the multiplications by
// 1, -i, -1 and i are exact swaps.
__device__ __forceinline__ float2 rotate16(float2 a, int e) {
    constexpr float c1 = 0.92387953251128674f, s1 = 0.38268343236508978f, h = 0.70710678118654752f;
    switch (e & 15) {
        case 0:
            return a;
        case 4:
            return make_float2(a.y, -a.x);
        case 8:
            return make_float2(-a.x, -a.y);
        case 12:
            return make_float2(-a.y, a.x);
        case 2:
            return make_float2(h * (a.x + a.y), h * (a.y - a.x));
        case 6:
            return make_float2(h * (a.y - a.x), -h * (a.x + a.y));
        case 10:
            return make_float2(-h * (a.x + a.y), h * (a.x - a.y));
        case 14:
            return make_float2(h * (a.x - a.y), h * (a.x + a.y));
        default: {
            // exp(-2 pi i e / 16) = cos - i sin, cos and sin of the odd multiples of pi/8.
            const int q = e & 15;
            const float c = (q == 1 || q == 15) ? c1 : (q == 3 || q == 13) ? s1 : (q == 5 || q == 11) ? -s1 : -c1;
            const float s = (q == 1 || q == 7) ? s1 : (q == 3 || q == 5) ? c1 : (q == 9 || q == 15) ? -s1 : -c1;
            return make_float2(a.x * c + a.y * s, a.y * c - a.x * s);
        }
    }
}

// In-register DFT of R points (R | 16), natural order in and out: radix-2 decimation in
// frequency, then the bit-reversal permutation (register renaming only).
template <int R>
__device__ __forceinline__ void dft(float2 (&a)[R]) {
#pragma unroll
    for (int half = R / 2; half >= 1; half /= 2) {
#pragma unroll
        for (int s = 0; s < R; s += 2 * half) {
#pragma unroll
            for (int i = 0; i < half; i++) {
                const float2 x = a[s + i], y = a[s + i + half];
                a[s + i] = x + y;
                a[s + i + half] = rotate16(x - y, i * (16 / (2 * half)));
            }
        }
    }
    float2 t[R];
#pragma unroll
    for (int k = 0; k < R; k++) {
        int rev = 0;
#pragma unroll
        for (int bit = 1, src = k; bit < R; bit *= 2, src /= 2) {
            rev = rev * 2 + (src & 1);
        }
        t[rev] = a[k];
    }
#pragma unroll
    for (int k = 0; k < R; k++) {
        a[k] = t[k];
    }
}

// The pass tables of an N-point transform with S points per thread (pass_table_size
// entries, copied from the 4096-entry table by fill_pass_table_entry).
struct PassTables {
    const float2 *tables;
};
// Entry i of the pass tables from the 4096-entry table (threads of a launch of at least
// pass_table_size(n, s) threads, one entry each).
__device__ inline void fill_pass_table_entry(float2 *tables, const float2 *table, int n, int s, int i) {
    if (i < pass_table_size(n, s)) {
        tables[i] = table[pass_table_source(n, s, i)];
    }
}

// The pass tables of an N-point transform with S points per thread (S = min(N, points)),
// from the 4096-entry table. Launch with pass_table_size(n, s) threads or more.
static __global__ void fill_pass_tables(float2 *tables, const float2 *table, int n, int s) {
    fill_pass_table_entry(tables, table, n, s, int(blockIdx.x * blockDim.x + threadIdx.x));
}

// w^(k r) of pass P (span Ns, radix R) of an N-point transform with S points per thread.
template <int N, int S, int P, int Ns, int R>
__device__ __forceinline__ float2 twiddle(const float2 *table, int k, int r) {
    return __ldg(&table[(k * r) * (kTableSize / (Ns * R))]);
}
template <int N, int S, int P, int Ns, int R>
__device__ __forceinline__ float2 twiddle(PassTables t, int k, int r) {
    constexpr int offset = pass_table_offset(N, S, P);
    return __ldg(&t.tables[offset + (r - 1) * Ns + k]);
}

// Pass P's twiddles for thread j: w[q R + r] multiplies point r of butterfly
// b = j + q T. With Prefetch they are loaded a pass ahead, so that their latency hides
// behind the exchange, at the price of the registers that hold them across it.
template <int N, int Points, int P, int Ns, typename Twiddles>
__device__ __forceinline__ void pass_twiddles(float2 (&w)[Shape<N, Points>::S], int j, const Twiddles &twiddles) {
    using Sh = Shape<N, Points>;
    constexpr int R = radix_of(N, Sh::S, P);
#pragma unroll
    for (int q = 0; q < Sh::S / R; q++) {
        const int k = (j + q * Sh::T) % Ns;
#pragma unroll
        for (int r = 0; r < R; r++) {
            w[q * R + r] = Ns > 1 && r > 0 ? twiddle<N, Sh::S, P, Ns, R>(twiddles, k, r) : make_float2(1.0f, 0.0f);
        }
    }
}

template <int N, int Points, bool Prefetch, int P, int Ns, typename Twiddles, typename Barrier>
__device__ __forceinline__ void stockham_pass(float2 (&v)[Shape<N, Points>::S], float2 *line, int j,
                                              const float2 (&prefetched)[Shape<N, Points>::S], const Twiddles &twiddles,
                                              const Barrier &barrier) {
    using Sh = Shape<N, Points>;
    constexpr int R = radix_of(N, Sh::S, P);
    constexpr int Q = Sh::S / R;  // butterflies per thread
    constexpr bool last = P + 1 == passes_of(N, Sh::S);
    if constexpr (P > 0) {
#pragma unroll
        for (int m = 0; m < Sh::S; m++) {
            v[m] = line[padded(j + Sh::T * m)];
        }
    }
    float2 out[Sh::S];
#pragma unroll
    for (int q = 0; q < Q; q++) {
        // Butterfly b = j + q T takes the points b + r N / R = j + T (q + r Q).
        const int k = (j + q * Sh::T) % Ns;
        float2 a[R];
#pragma unroll
        for (int r = 0; r < R; r++) {
            a[r] = v[q + r * Q];
            if (Ns > 1 && r > 0) {
                a[r] = cmul(a[r], Prefetch ? prefetched[q * R + r] : twiddle<N, Sh::S, P, Ns, R>(twiddles, k, r));
            }
        }
        dft<R>(a);
#pragma unroll
        for (int r = 0; r < R; r++) {
            out[q + r * Q] = a[r];
        }
    }
    if constexpr (last) {
        // Outputs b + r Ns with Ns R = N: canonical slot q + r Q again.
#pragma unroll
        for (int m = 0; m < Sh::S; m++) {
            v[m] = out[m];
        }
    } else {
        float2 next[Sh::S] = {};
        if constexpr (Prefetch) {
            pass_twiddles<N, Points, P + 1, Ns * R>(next, j, twiddles);
        }
        barrier.sync();  // every thread of the line has read the previous pass's points
#pragma unroll
        for (int q = 0; q < Q; q++) {
            const int b = j + q * Sh::T;
            const int base = (b / Ns) * Ns * R + b % Ns;
#pragma unroll
            for (int r = 0; r < R; r++) {
                line[padded(base + r * Ns)] = out[q + r * Q];
            }
        }
        barrier.sync();
        stockham_pass<N, Points, Prefetch, P + 1, Ns * R>(v, line, j, next, twiddles, barrier);
    }
}

// Forward transform (exp(-2 pi i ...)) of the line in v (canonical layout in and out),
// with `line` (at least N + N / 16 points of shared memory) for the exchanges and
// `twiddles` the 4096-entry table or the transform's PassTables. Every
// thread of the line calls it the same number of times (it waits at `barrier`, a
// LineBarrier or a BlockBarrier).
// Prefetch: each pass's twiddles are loaded during the pass before it.
template <int N, int Points, bool Prefetch, typename Twiddles, typename Barrier>
__device__ __forceinline__ void forward(float2 (&v)[Shape<N, Points>::S], float2 *line, int j, const Twiddles &twiddles,
                                        const Barrier &barrier) {
    float2 first[Shape<N, Points>::S];  // all 1: the first pass has no twiddles
    pass_twiddles<N, Points, 0, 1>(first, j, twiddles);
    stockham_pass<N, Points, Prefetch, 0, 1>(v, line, j, first, twiddles, barrier);
}

}  // namespace halconv::rk::fft_line
