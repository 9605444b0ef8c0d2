// Probe: the separable filter's row pass on Hopper's warpgroup tensor cores (wgmma), float32
// samples as in-place float16 parts (common/split_f32.h), to measure what a tensor-core
// form of the sliding pass could reach before building one (issue 22, part 1).
//
// Orientation: D (64 x N) = A (64 x KP) B (KP x N) per tile of 64 outputs along x and N
// image rows, with
//   A(m, k) = taps[k - m] (zero outside 0 <= k - m < K): a Toeplitz block of the taps, the
//     same for every tile, built once per block;
//   B(k, n) = image row y0 + n, sample x0 + k: k-major, i.e. the image rows as they lie,
//     KP = 64 + K - 1 rounded up to 16;
//   D(m, n) = out(x0 + m, y0 + n).
// Tensor-core work per output is KP, not K: the price of the Toeplitz form (2x at K = 63).
// Each image row of a tile is scaled by its own power of two (its largest magnitude to
// [2^14, 2^15)): a row's outputs depend on that row only, so no scale is shared across
// rows (form 1: a thread owns a row; from form 2 a warp does, with one reduction). The
// products chain in one accumulator (mid x hi, hi x mid, hi x hi): per `Chain` k16 slices in
// forms 1-2, the chains added outside the tensor core as in im2tensor_fused_sm90.cu; over
// all KP / 16 slices from form 3.
//
// Not in the probe: boundaries (the image is padded), non-finite samples; the column pass
// is separable_wgmma_column_probe.cu. Results and what each form is:
// bench/results/h200/separable/wgmma-passes-2026-11-28/RUN.md. Build:
//   nvcc -Iruntime_kernels -O3 -std=c++20 -gencode arch=compute_90a,code=sm_90a \
//       bench/probes/separable_wgmma_row_probe.cu -o probe
// Usage: probe K [WIDTH HEIGHT]   (times the pass and a copy of the same bytes, checks it)
//   FORM=1 (first form) | 2 (default; WG=2|3 warpgroups a block with MB=1|2, N 64) | 3 (pipelined;
//   MB=1|2|3, N 64) | 4 (warp-specialized; N=32 with MB=2|4, N=64 with MB=1|2) | 5 (the fourth with A
//   in registers and two B buffers a consumer; MB=1|2|3, N 32) | 6 (the fifth with three consumers
//   and a producer warpgroup; MB=1|2); MB=2|4 (64-output blocks a tile), N=64|128 (rows a
//   tile); TILES=t (tiles a block, else 1 ... 32 each); form 1: CHAIN=2|4|8, HOLD=1,
//   MODE=1 (no products) | 2 (staging once a block); forms 5, 6: MODE=1 (no stores) | 2 (each
//   B buffer split once)
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <type_traits>
#include <vector>

#include "common/async_copy.cuh"
#include "common/split_f32.h"
#include "common/wgmma.cuh"
#include "wgmma_probe_common.cuh"

using namespace halconv::rk;

constexpr int kN = 128;        // image rows per tile (the wgmma's N)
constexpr int kThreads = 128;  // one warpgroup; thread n stages image row n of the tile
static_assert(kN == kThreads);

template <int KP>
constexpr int a_part_bytes = 64 * KP * 2;
template <int KP>
constexpr int b_part_bytes = KP * 2 * kN;
template <int KP>
constexpr int shared_bytes = 2 * a_part_bytes<KP> + 2 * b_part_bytes<KP> + kN * 4;

// Element (m, k) of A: k-major core matrices, those adjacent in m 128 bytes apart (SBO),
// in k 1024 (LBO).
__device__ __forceinline__ int a_offset(int m, int k) {
    return (k / 8) * 1024 + (m / 8) * 128 + (m % 8) * 16 + (k % 8) * 2;
}
// Row n, samples 8 kb .. 8 kb + 7 of B: adjacent in n 128 bytes apart (SBO), in k
// kN / 8 * 128 (LBO).
__device__ __forceinline__ int b_offset(int n, int kb) {
    return kb * (kN / 8 * 128) + (n / 8) * 128 + (n % 8) * 16;
}

// Form 1: samples 8 kb .. 8 kb + 7 of row n (u, v), scaled, as their parts in B.
__device__ __forceinline__ void store_split8(float4 u, float4 v, float scale, unsigned char *b_hi, unsigned char *b_mid,
                                             int n, int kb) {
    const float s[8] = {u.x, u.y, u.z, u.w, v.x, v.y, v.z, v.w};
    uint32_t hi[4], mid[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const split_f32::InPlaceParts a = split_f32::split_in_place(s[2 * i] * scale);
        const split_f32::InPlaceParts b = split_f32::split_in_place(s[2 * i + 1] * scale);
        hi[i] = pack_half2(a.hi, b.hi);
        mid[i] = pack_half2(a.mid, b.mid);
    }
    *reinterpret_cast<uint4 *>(b_hi + b_offset(n, kb)) = make_uint4(hi[0], hi[1], hi[2], hi[3]);
    *reinterpret_cast<uint4 *>(b_mid + b_offset(n, kb)) = make_uint4(mid[0], mid[1], mid[2], mid[3]);
}

struct Args {
    const float *in;
    int64_t in_pitch;  // floats; rows hold at least W + KP samples (zero beyond the image)
    float *out;
    int64_t out_pitch;
    int width, height;  // outputs
    const float *taps;
    int k;
    float tap_scale;      // 2^e_taps
    int tap_exponent;     // e_taps
    int tiles_per_block;  // along y
    int hold;             // KP <= 128: read each row once into registers
    int mode;             // 0: the pass; else a time breakdown (the usage above)
};

// The taps' Toeplitz block A(m, k) = taps[k - m] (scaled; zero outside the taps), 64 x KP,
// as two float16 parts in a_offset's layout: element e of 64 KP by the threads from `first`
// in steps of `step`.
template <int KP>
__device__ __forceinline__ void stage_taps_block(const Args &p, unsigned char *a_hi, unsigned char *a_mid, int first,
                                                 int step) {
    for (int e = first; e < 64 * KP; e += step) {
        const int m = e / KP, k = e % KP, i = k - m;
        const float v = i >= 0 && i < p.k ? p.taps[i] * p.tap_scale : 0.0f;
        const split_f32::InPlaceParts s = split_f32::split_in_place(v);
        *reinterpret_cast<__half *>(a_hi + a_offset(m, k)) = __float2half_rn(s.hi);
        *reinterpret_cast<__half *>(a_mid + a_offset(m, k)) = __float2half_rn(s.mid);
    }
}

// Forms 1-4: the sums of one block of 64 outputs from x to the output, each row times its
// factor in `unscale`. d[4j + 0..1] = D(16 w + g, 8 j + 2 q ..), d[4j + 2..3] = D(16 w + g + 8,
// ...); D(m, n) = out(x + m, y0 + n).
template <int N>
__device__ __forceinline__ void store_block(const float (&acc)[N / 2], const Args &p, int x, int y0,
                                            const float *unscale) {
    const int t = int(threadIdx.x) % 128, warp = t / 32, lane = t % 32, g = lane / 4, q = lane % 4;
    const int xa = x + 16 * warp + g, xb = xa + 8;
#pragma unroll
    for (int j = 0; j < N / 8; j++) {
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int n = 8 * j + 2 * q + h;
            if (y0 + n < p.height) {
                float *o = p.out + int64_t(y0 + n) * p.out_pitch;
                const float u = unscale[n];
                if (xa < p.width) {
                    o[xa] = acc[4 * j + h] * u;
                }
                if (xb < p.width) {
                    o[xb] = acc[4 * j + 2 + h] * u;
                }
            }
        }
    }
}

template <int KP, int Chain>
__global__ void __launch_bounds__(kThreads) row_pass(Args p) {
    constexpr int KS = KP / 16;  // k16 slices
    constexpr int chains = (KS + Chain - 1) / Chain;
    extern __shared__ __align__(1024) unsigned char smem[];
    unsigned char *a_hi = smem, *a_mid = smem + a_part_bytes<KP>;
    unsigned char *b_hi = smem + 2 * a_part_bytes<KP>, *b_mid = b_hi + b_part_bytes<KP>;
    float *unscale = reinterpret_cast<float *>(b_mid + b_part_bytes<KP>);
    const int t = int(threadIdx.x);

    // The taps' Toeplitz block, once per block.
    stage_taps_block<KP>(p, a_hi, a_mid, t, kThreads);

    const int x0 = int(blockIdx.x) * 64;
    for (int tile = 0; tile < p.tiles_per_block; tile++) {
        const int y0 = (int(blockIdx.y) * p.tiles_per_block + tile) * kN;
        if (y0 >= p.height) {
            break;
        }
        // Stage: thread t owns row y0 + t (rows past the image read row 0: never written).
        bool staged = p.mode == 2 && tile > 0;
        if (!staged) {
            const int y = y0 + t < p.height ? y0 + t : 0;
            const float4 *row = reinterpret_cast<const float4 *>(p.in + int64_t(y) * p.in_pitch + x0);
            if constexpr (KP <= 128) {
                if (p.hold) {
                    // One read: the row's samples held in registers until its scale is known.
                    float4 r[KP / 4];
#pragma unroll
                    for (int i = 0; i < KP / 4; i++) {
                        r[i] = __ldg(row + i);
                    }
                    float largest = 0.0f;
#pragma unroll
                    for (int i = 0; i < KP / 4; i++) {
                        largest = fmaxf(
                            largest, fmaxf(fmaxf(fabsf(r[i].x), fabsf(r[i].y)), fmaxf(fabsf(r[i].z), fabsf(r[i].w))));
                    }
                    const int e = split_f32::scale_exponent(largest);
                    const float scale = ldexpf(1.0f, e);
                    unscale[t] = ldexpf(1.0f, -e - p.tap_exponent);
#pragma unroll
                    for (int kb = 0; kb < KP / 8; kb++) {
                        store_split8(r[2 * kb], r[2 * kb + 1], scale, b_hi, b_mid, t, kb);
                    }
                    staged = true;
                }
            }
            if (!staged) {
                float largest = 0.0f;
#pragma unroll 4
                for (int kb = 0; kb < KP / 8; kb++) {
                    const float4 u = __ldg(row + 2 * kb), v = __ldg(row + 2 * kb + 1);
                    largest = fmaxf(largest, fmaxf(fmaxf(fabsf(u.x), fabsf(u.y)), fmaxf(fabsf(u.z), fabsf(u.w))));
                    largest = fmaxf(largest, fmaxf(fmaxf(fabsf(v.x), fabsf(v.y)), fmaxf(fabsf(v.z), fabsf(v.w))));
                }
                const int e = split_f32::scale_exponent(largest);
                const float scale = ldexpf(1.0f, e);
                unscale[t] = ldexpf(1.0f, -e - p.tap_exponent);
#pragma unroll 4
                for (int kb = 0; kb < KP / 8; kb++) {
                    store_split8(__ldg(row + 2 * kb), __ldg(row + 2 * kb + 1), scale, b_hi, b_mid, t, kb);
                }
            }
        }
        fence_proxy_async();
        __syncthreads();

        float acc[64], chain[64];
        if (p.mode == 1) {
#pragma unroll
            for (int i = 0; i < 64; i++) {
                acc[i] = __half2float(*reinterpret_cast<const __half *>(b_hi + 2 * (i + 64 * (t % 32))));
            }
        } else {
            const uint32_t ah = shared_address(a_hi), am = shared_address(a_mid);
            const uint32_t bh = shared_address(b_hi), bm = shared_address(b_mid);
#pragma unroll
            for (int c = 0; c < chains; c++) {
                float(&d)[64] = c == 0 ? acc : chain;
                if (c >= 2) {
                    wgmma_wait<0>();
#pragma unroll
                    for (int i = 0; i < 64; i++) {
                        acc[i] += chain[i];
                    }
                }
                wgmma_fence();
#pragma unroll
                for (int s = c * Chain; s < (c + 1) * Chain && s < KS; s++) {
                    const uint64_t da_hi = wgmma_descriptor(ah + s * 2048, 1024, 128);
                    const uint64_t da_mid = wgmma_descriptor(am + s * 2048, 1024, 128);
                    const uint64_t db_hi = wgmma_descriptor(bh + s * 2 * (kN / 8 * 128), kN / 8 * 128, 128);
                    const uint64_t db_mid = wgmma_descriptor(bm + s * 2 * (kN / 8 * 128), kN / 8 * 128, 128);
                    wgmma_m64n128k16<0>(d, da_mid, db_hi, s > c * Chain);
                    wgmma_m64n128k16<0>(d, da_hi, db_mid, true);
                    wgmma_m64n128k16<0>(d, da_hi, db_hi, true);
                }
                wgmma_commit();
            }
            wgmma_wait<0>();
            if constexpr (chains > 1) {
#pragma unroll
                for (int i = 0; i < 64; i++) {
                    acc[i] += chain[i];
                }
            }
        }
        store_block<kN>(acc, p, x0, y0, unscale);
        __syncthreads();  // every warp's wgmma done before the next tile's staging
    }
}

// d (64 x 64, f32) = A B + (accumulate ? d : 0), both operands k-major from shared memory.
__device__ inline void wgmma_m64n64k16(float (&d)[32], uint64_t a, uint64_t b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
        "}, %32, %33, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(a), "l"(b), "r"(int(accumulate)));
}
template <int N>
__device__ __forceinline__ void mma(float (&d)[N / 2], uint64_t a, uint64_t b, bool accumulate) {
    if constexpr (N == 64) {
        wgmma_m64n64k16(d, a, b, accumulate);
    } else {
        wgmma_m64n128k16<0>(d, a, b, accumulate);
    }
}

// The second form. B as 128-byte-swizzled k-major atoms (8 rows x 64 halfs, 1024 bytes;
// the 16-byte chunk c of row r at chunk c ^ r), so that a warp stores a row's run of samples
// without bank conflicts: atom a of the staged width (samples 64 a .. 64 a + 63) of rows
// 8 i .. 8 i + 7 at a * (N / 8 * 1024) + i * 1024. A warp stages whole rows (coalesced
// loads, a reduction for the row's scale). A tile is MB blocks of 64 outputs that share
// the staged rows: block b reads from atom b on, so the reads of the apron are shared.
template <int KP, int MB, int N>
struct V2 {
    static constexpr int KS = KP / 16;
    static constexpr int width = 64 * (MB - 1) + KP;  // staged samples of a row
    static constexpr int atoms = (width + 63) / 64;
    static constexpr int plane = N / 8 * 1024;  // bytes of one atom column over the tile's rows
    static constexpr int b_part = atoms * plane;
    static constexpr int a_part = 64 * KP * 2;
    static constexpr int groups = (atoms * 64 + 127) / 128;  // float4 loads of a row per lane
};

// WG warpgroups a block, each with its own tiles and B buffers, sharing the taps' block.
template <int KP, int MB, int N, int WG>
constexpr int v2_bytes = 1024 + WG *(2 * V2<KP, MB, N>::b_part + N * 4) + 2 * V2<KP, MB, N>::a_part;

__device__ __forceinline__ void warpgroup_sync(int wg) {
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + wg) : "memory");
}

template <int KP, int MB, int N, int Chain, int WG>
__global__ void __launch_bounds__(kThreads *WG) row_pass_v2(Args p) {
    using L = V2<KP, MB, N>;
    constexpr int chains = (L::KS + Chain - 1) / Chain;
    extern __shared__ unsigned char raw[];
    const uint32_t raw_address = shared_address(raw);
    unsigned char *base = raw + ((1024 - (raw_address & 1023)) & 1023);  // atoms 1024-byte aligned
    const int wg = int(threadIdx.x) / kThreads;
    unsigned char *b_hi = base + wg * 2 * L::b_part, *b_mid = b_hi + L::b_part;
    unsigned char *a_hi = base + WG * 2 * L::b_part, *a_mid = a_hi + L::a_part;
    float *unscale = reinterpret_cast<float *>(a_mid + L::a_part) + wg * N;
    const int t = int(threadIdx.x) % kThreads, warp = t / 32, lane = t % 32;

    stage_taps_block<KP>(p, a_hi, a_mid, int(threadIdx.x), kThreads * WG);

    fence_proxy_async();
    __syncthreads();
    const int x0 = int(blockIdx.x) * 64 * MB;
    for (int tile = 0; tile < p.tiles_per_block; tile++) {
        const int y0 = ((int(blockIdx.y) * WG + wg) * p.tiles_per_block + tile) * N;
        if (y0 >= p.height) {
            break;
        }
        // Warp w stages rows w, w + 4, ...: lane l holds samples 128 c + 4 l.
        constexpr int rows_per_warp = N / 4, batch = 4;
#pragma unroll 1
        for (int r0 = 0; r0 < rows_per_warp; r0 += batch) {
            float4 v[batch][L::groups];
#pragma unroll
            for (int b = 0; b < batch; b++) {
                const int n = warp + 4 * (r0 + b), y = y0 + n < p.height ? y0 + n : 0;
                const float *row = p.in + int64_t(y) * p.in_pitch + x0;
#pragma unroll
                for (int c = 0; c < L::groups; c++) {
                    const int k = 128 * c + 4 * lane;
                    v[b][c] = k < L::atoms * 64 ? __ldg(reinterpret_cast<const float4 *>(row + k))
                                                : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                }
            }
#pragma unroll
            for (int b = 0; b < batch; b++) {
                const int n = warp + 4 * (r0 + b);
                float largest = 0.0f;
#pragma unroll
                for (int c = 0; c < L::groups; c++) {
                    largest = fmaxf(largest, fmaxf(fmaxf(fabsf(v[b][c].x), fabsf(v[b][c].y)),
                                                   fmaxf(fabsf(v[b][c].z), fabsf(v[b][c].w))));
                }
                largest = __uint_as_float(__reduce_max_sync(0xffffffffu, __float_as_uint(largest)));
                const int e = split_f32::scale_exponent(largest);
                const float scale = ldexpf(1.0f, e);
                if (lane == 0) {
                    unscale[n] = ldexpf(1.0f, -e - p.tap_exponent);
                }
#pragma unroll
                for (int c = 0; c < L::groups; c++) {
                    const int k = 128 * c + 4 * lane;
                    if (k < L::atoms * 64) {
                        const split_f32::InPlaceParts s0 = split_f32::split_in_place(v[b][c].x * scale);
                        const split_f32::InPlaceParts s1 = split_f32::split_in_place(v[b][c].y * scale);
                        const split_f32::InPlaceParts s2 = split_f32::split_in_place(v[b][c].z * scale);
                        const split_f32::InPlaceParts s3 = split_f32::split_in_place(v[b][c].w * scale);
                        const int a = k / 64, chunk = (k % 64) / 8, r = n % 8;
                        const int at = a * L::plane + (n / 8) * 1024 + r * 128 + ((chunk ^ r) * 16) + (k % 8) * 2;
                        *reinterpret_cast<uint2 *>(b_hi + at) =
                            make_uint2(pack_half2(s0.hi, s1.hi), pack_half2(s2.hi, s3.hi));
                        *reinterpret_cast<uint2 *>(b_mid + at) =
                            make_uint2(pack_half2(s0.mid, s1.mid), pack_half2(s2.mid, s3.mid));
                    }
                }
            }
        }
        fence_proxy_async();
        warpgroup_sync(wg);

        const uint32_t ah = shared_address(a_hi), am = shared_address(a_mid);
        const uint32_t bh = shared_address(b_hi), bm = shared_address(b_mid);
#pragma unroll 1
        for (int mb = 0; mb < MB; mb++) {
            float acc[N / 2], chain[N / 2];
#pragma unroll
            for (int c = 0; c < chains; c++) {
                float(&d)[N / 2] = c == 0 ? acc : chain;
                if (c >= 2) {
                    wgmma_wait<0>();
#pragma unroll
                    for (int i = 0; i < N / 2; i++) {
                        acc[i] += chain[i];
                    }
                }
                wgmma_fence();
#pragma unroll
                for (int s = c * Chain; s < (c + 1) * Chain && s < L::KS; s++) {
                    const uint32_t b_at = (mb + s / 4) * L::plane + (s % 4) * 32;
                    const uint64_t da_hi = wgmma_descriptor(ah + s * 2048, 1024, 128);
                    const uint64_t da_mid = wgmma_descriptor(am + s * 2048, 1024, 128);
                    const uint64_t db_hi = wgmma_sw128_descriptor(bh + b_at), db_mid = wgmma_sw128_descriptor(bm + b_at);
                    mma<N>(d, da_mid, db_hi, s > c * Chain);
                    mma<N>(d, da_hi, db_mid, true);
                    mma<N>(d, da_hi, db_hi, true);
                }
                wgmma_commit();
            }
            wgmma_wait<0>();
            if constexpr (chains > 1) {
#pragma unroll
                for (int i = 0; i < N / 2; i++) {
                    acc[i] += chain[i];
                }
            }
            store_block<N>(acc, p, x0 + 64 * mb, y0, unscale);
        }
        warpgroup_sync(wg);  // every warp's wgmma done before the next tile's staging
    }
}

template <int KP, int MB, int N, int Chain, int WG = 1>
float run_v2(const Args &a, int reps, cudaStream_t s) {
    constexpr int bytes = v2_bytes<KP, MB, N, WG>;
    if (bytes > 227 * 1024) {
        std::printf("  form 2 KP %d MB %d N %d WG %d: %d bytes of shared memory, past the 227 KiB\n", KP, MB, N, WG,
                    bytes);
        return 1e30f;
    }
    const int blocks_x = (a.width + 64 * MB - 1) / (64 * MB), tiles_y = (a.height + N - 1) / N;
    const dim3 grid(blocks_x, (tiles_y + a.tiles_per_block * WG - 1) / (a.tiles_per_block * WG));
    CHECK(cudaFuncSetAttribute(row_pass_v2<KP, MB, N, Chain, WG>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return median_ms([&] { row_pass_v2<KP, MB, N, Chain, WG><<<grid, kThreads * WG, bytes, s>>>(a); }, reps, s);
}

// d (64 x 32, f32) = A B + (accumulate ? d : 0), both operands k-major from shared memory.
__device__ inline void wgmma_m64n32k16(float (&d)[16], uint64_t a, uint64_t b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
        "}, %16, %17, p, 1, 1, 0, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "l"(a), "l"(b), "r"(int(accumulate)));
}
template <int N>
__device__ __forceinline__ void mma_n(float (&d)[N / 2], uint64_t a, uint64_t b, bool accumulate) {
    if constexpr (N == 32) {
        wgmma_m64n32k16(d, a, b, accumulate);
    } else {
        mma<N>(d, a, b, accumulate);
    }
}

// Forms 3 and 4: the products of a tile's MB blocks of 64 outputs, issued together (A, the
// taps' block, in shared memory; B in the second form's atoms, block mb from atom mb on).
template <typename L, int MB, int N>
__device__ __forceinline__ void issue_products(float (&acc)[MB][N / 2], uint32_t ah, uint32_t am, uint32_t bh,
                                               uint32_t bm) {
#pragma unroll
    for (int mb = 0; mb < MB; mb++) {
#pragma unroll
        for (int ks = 0; ks < L::KS; ks++) {
            const uint32_t b_at = (mb + ks / 4) * L::plane + (ks % 4) * 32;
            const uint64_t da_hi = wgmma_descriptor(ah + ks * 2048, 1024, 128);
            const uint64_t da_mid = wgmma_descriptor(am + ks * 2048, 1024, 128);
            const uint64_t db_hi = wgmma_sw128_descriptor(bh + b_at), db_mid = wgmma_sw128_descriptor(bm + b_at);
            mma_n<N>(acc[mb], da_mid, db_hi, ks > 0);
            mma_n<N>(acc[mb], da_hi, db_mid, true);
            mma_n<N>(acc[mb], da_hi, db_hi, true);
        }
    }
}

// The third form: the second's layout, pipelined in one warpgroup. The next tile's samples
// are copied (cp.async) into a float32 stage while the current tile multiplies; the split
// of the next tile into the other of two B buffers runs under the current tile's wgmma;
// each 64-output block's products chain in one accumulator (all KP / 16 slices), so
// that the MB blocks' products are issued together.
template <int KP, int MB, int N>
struct V3 {
    using L = V2<KP, MB, N>;
    static constexpr int stage_floats = N * L::atoms * 64;
    static constexpr int bytes = 1024 + 4 * L::b_part + stage_floats * 4 + 2 * L::a_part + 2 * N * 4;
};

template <int KP, int MB, int N>
__global__ void __launch_bounds__(kThreads, 1) row_pass_v3(Args p) {
    using L = V2<KP, MB, N>;
    constexpr int row_floats = L::atoms * 64;
    extern __shared__ unsigned char raw[];
    const uint32_t raw_address = shared_address(raw);
    unsigned char *base = raw + ((1024 - (raw_address & 1023)) & 1023);
    unsigned char *b_parts = base;  // buffer b, part h at (2 b + h) * b_part
    float *stage = reinterpret_cast<float *>(base + 4 * L::b_part);
    unsigned char *a_hi = reinterpret_cast<unsigned char *>(stage + V3<KP, MB, N>::stage_floats);
    unsigned char *a_mid = a_hi + L::a_part;
    float *unscale = reinterpret_cast<float *>(a_mid + L::a_part);  // [2][N]
    const int t = int(threadIdx.x), warp = t / 32, lane = t % 32;

    stage_taps_block<KP>(p, a_hi, a_mid, t, kThreads);

    const int x0 = int(blockIdx.x) * 64 * MB;
    const int tiles_y = (p.height + N - 1) / N, first = int(blockIdx.y) * p.tiles_per_block;
    const int count = min(p.tiles_per_block, tiles_y - first);
    const auto load = [&](int tile) {
        const int y0 = tile * N;
        for (int e = t; e < N * row_floats / 4; e += kThreads) {
            const int n = e / (row_floats / 4), c = e % (row_floats / 4);
            const int y = y0 + n < p.height ? y0 + n : 0;
            cp_async_zfill<16>(shared_address(stage + n * row_floats + 4 * c),
                               p.in + int64_t(y) * p.in_pitch + x0 + 4 * c, 16);
        }
        cp_async_commit();
    };
    const auto split = [&](int buffer) {
        unsigned char *hi = b_parts + 2 * buffer * L::b_part, *mid = hi + L::b_part;
#pragma unroll 2
        for (int r = 0; r < N / 4; r++) {
            const int n = warp + 4 * r;
            float4 v[L::groups];
            float largest = 0.0f;
#pragma unroll
            for (int c = 0; c < L::groups; c++) {
                const int k = 128 * c + 4 * lane;
                v[c] = k < row_floats ? *reinterpret_cast<const float4 *>(stage + n * row_floats + k)
                                      : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
                largest =
                    fmaxf(largest, fmaxf(fmaxf(fabsf(v[c].x), fabsf(v[c].y)), fmaxf(fabsf(v[c].z), fabsf(v[c].w))));
            }
            largest = __uint_as_float(__reduce_max_sync(0xffffffffu, __float_as_uint(largest)));
            const int e = split_f32::scale_exponent(largest);
            const float scale = ldexpf(1.0f, e);
            if (lane == 0) {
                unscale[buffer * N + n] = ldexpf(1.0f, -e - p.tap_exponent);
            }
#pragma unroll
            for (int c = 0; c < L::groups; c++) {
                const int k = 128 * c + 4 * lane;
                if (k < row_floats) {
                    const split_f32::InPlaceParts s0 = split_f32::split_in_place(v[c].x * scale);
                    const split_f32::InPlaceParts s1 = split_f32::split_in_place(v[c].y * scale);
                    const split_f32::InPlaceParts s2 = split_f32::split_in_place(v[c].z * scale);
                    const split_f32::InPlaceParts s3 = split_f32::split_in_place(v[c].w * scale);
                    const int a = k / 64, chunk = (k % 64) / 8, rr = n % 8;
                    const int at = a * L::plane + (n / 8) * 1024 + rr * 128 + ((chunk ^ rr) * 16) + (k % 8) * 2;
                    *reinterpret_cast<uint2 *>(hi + at) =
                        make_uint2(pack_half2(s0.hi, s1.hi), pack_half2(s2.hi, s3.hi));
                    *reinterpret_cast<uint2 *>(mid + at) =
                        make_uint2(pack_half2(s0.mid, s1.mid), pack_half2(s2.mid, s3.mid));
                }
            }
        }
    };
    if (count <= 0) {
        return;
    }
    load(first);
    cp_async_wait<0>();
    __syncthreads();
    split(0);
    __syncthreads();
    if (count > 1) {
        load(first + 1);
    }
    const uint32_t ah = shared_address(a_hi), am = shared_address(a_mid);
#pragma unroll 1
    for (int i = 0; i < count; i++) {
        const int buffer = i % 2, y0 = (first + i) * N;
        fence_proxy_async();
        __syncthreads();
        float acc[MB][N / 2];
        const uint32_t bh = shared_address(b_parts + 2 * buffer * L::b_part), bm = bh + L::b_part;
        wgmma_fence();
        issue_products<L, MB, N>(acc, ah, am, bh, bm);
        wgmma_commit();
        if (i + 1 < count) {
            cp_async_wait<0>();
            __syncthreads();
            split(1 - buffer);
            __syncthreads();  // the stage read: the next copy may overwrite it
            if (i + 2 < count) {
                load(first + i + 2);
            }
        }
        wgmma_wait<0>();
#pragma unroll
        for (int mb = 0; mb < MB; mb++) {
            store_block<N>(acc[mb], p, x0 + 64 * mb, y0, unscale + buffer * N);
        }
    }
}

template <int KP, int MB, int N>
float run_v3(const Args &a, int reps, cudaStream_t s) {
    constexpr int bytes = V3<KP, MB, N>::bytes;
    if (bytes > 227 * 1024) {
        std::printf("  form 3 KP %d MB %d N %d: %d bytes of shared memory, past the 227 KiB\n", KP, MB, N, bytes);
        return 1e30f;
    }
    const int blocks_x = (a.width + 64 * MB - 1) / (64 * MB), tiles_y = (a.height + N - 1) / N;
    const dim3 grid(blocks_x, (tiles_y + a.tiles_per_block - 1) / a.tiles_per_block);
    CHECK(cudaFuncSetAttribute(row_pass_v3<KP, MB, N>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return median_ms([&] { row_pass_v3<KP, MB, N><<<grid, kThreads, bytes, s>>>(a); }, reps, s);
}

// Forms 4-6: image row n of a tile, staged as float32 at `row` (RowFloats samples), split by
// one warp into the tile's B parts (the second form's swizzled atoms) at its own power-of-two
// scale; lane 0 writes the row's factor back to output units to `unscale`.
template <typename L, int RowFloats>
__device__ __forceinline__ void split_staged_row(const float *row, int n, int lane, unsigned char *hi,
                                                 unsigned char *mid, float &unscale, int tap_exponent) {
    float4 v[L::groups];
    float largest = 0.0f;
#pragma unroll
    for (int c = 0; c < L::groups; c++) {
        const int k = 128 * c + 4 * lane;
        v[c] = k < RowFloats ? *reinterpret_cast<const float4 *>(row + k) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        largest = fmaxf(largest, fmaxf(fmaxf(fabsf(v[c].x), fabsf(v[c].y)), fmaxf(fabsf(v[c].z), fabsf(v[c].w))));
    }
    largest = __uint_as_float(__reduce_max_sync(0xffffffffu, __float_as_uint(largest)));
    const int e = split_f32::scale_exponent(largest);
    const float scale = pow2(e);
    if (lane == 0) {
        unscale = pow2(-e - tap_exponent);
    }
#pragma unroll
    for (int c = 0; c < L::groups; c++) {
        const int k = 128 * c + 4 * lane;
        if (k < RowFloats) {
            uint32_t h0, m0, h1, m1;
            split_pair(v[c].x * scale, v[c].y * scale, h0, m0);
            split_pair(v[c].z * scale, v[c].w * scale, h1, m1);
            const int a = k / 64, chunk = (k % 64) / 8, rr = n % 8;
            const int at = a * L::plane + (n / 8) * 1024 + rr * 128 + ((chunk ^ rr) * 16) + (k % 8) * 2;
            *reinterpret_cast<uint2 *>(hi + at) = make_uint2(h0, h1);
            *reinterpret_cast<uint2 *>(mid + at) = make_uint2(m0, m1);
        }
    }
}

// Forms 4-6, the producer warp: tile i's N rows (RowFloats samples each from x0) into stage
// i mod Stages, one bulk copy a row, counted on the stage's "full" mbarrier once the
// consumer that read the stage before has marked it "empty".
template <int N, int Stages, int RowFloats>
__device__ __forceinline__ void produce_tiles(const Args &p, float *stages, uint32_t full0, uint32_t empty0, int x0,
                                              int first, int count) {
    const int lane = int(threadIdx.x) % 32;
    for (int i = 0; i < count; i++) {
        const int s = i % Stages, round = i / Stages;
        mbarrier_wait(empty0 + 8 * s, (round & 1) ^ 1);
        if (lane == 0) {
            mbarrier_arrive_expect_tx(full0 + 8 * s, N * RowFloats * 4);
        }
        __syncwarp();
        const int y0 = (first + i) * N;
        for (int n = lane; n < N; n += 32) {
            const int y = y0 + n < p.height ? y0 + n : 0;
            bulk_load(shared_address(stages + (s * N + n) * RowFloats), p.in + int64_t(y) * p.in_pitch + x0,
                      RowFloats * 4, full0 + 8 * s);
        }
    }
}

// The fourth form: warp-specialized. A producer warp copies each tile's rows (one bulk copy
// a row, cp.async.bulk) into a ring of Stages float32 buffers, counted on "full"
// mbarriers; two consumer warpgroups take alternate tiles: each splits its stage into its
// own B (the second form's swizzled atoms), frees the stage ("empty"), multiplies and
// stores. So the copies of later tiles are in flight while a consumer splits and
// multiplies, and one consumer's split runs beside the other's products.
template <int KP, int MB, int N, int Stages>
struct V4 {
    using L = V2<KP, MB, N>;
    static constexpr int consumers = 2;
    static constexpr int threads = consumers * 128 + 32;
    static constexpr int row_floats = L::atoms * 64;
    static constexpr int stage_bytes = N * row_floats * 4;
    static constexpr int bytes =
        1024 + consumers * 2 * L::b_part + Stages * stage_bytes + 2 * L::a_part + consumers * N * 4 + 2 * Stages * 8;
};

template <int KP, int MB, int N, int Stages>
__global__ void __launch_bounds__(V4<KP, MB, N, Stages>::threads, 1) row_pass_v4(Args p) {
    using F = V4<KP, MB, N, Stages>;
    using L = V2<KP, MB, N>;
    extern __shared__ unsigned char raw[];
    const uint32_t raw_address = shared_address(raw);
    unsigned char *base = raw + ((1024 - (raw_address & 1023)) & 1023);
    unsigned char *b_all = base;
    float *stages = reinterpret_cast<float *>(base + F::consumers * 2 * L::b_part);
    unsigned char *a_hi = reinterpret_cast<unsigned char *>(stages) + Stages * F::stage_bytes;
    unsigned char *a_mid = a_hi + L::a_part;
    float *unscale_all = reinterpret_cast<float *>(a_mid + L::a_part);
    uint64_t *bars = reinterpret_cast<uint64_t *>(unscale_all + F::consumers * N);  // full[Stages], empty[Stages]
    const uint32_t full0 = shared_address(bars), empty0 = full0 + 8 * Stages;
    const int tid = int(threadIdx.x);

    stage_taps_block<KP>(p, a_hi, a_mid, tid, F::threads);
    if (tid == 0) {
        for (int s = 0; s < Stages; s++) {
            mbarrier_init(full0 + 8 * s, 1);
            mbarrier_init(empty0 + 8 * s, 1);
        }
        mbarrier_init_fence();
    }
    fence_proxy_async();
    __syncthreads();

    const int x0 = int(blockIdx.x) * 64 * MB;
    const int tiles_y = (p.height + N - 1) / N, first = int(blockIdx.y) * p.tiles_per_block;
    const int count = min(p.tiles_per_block, tiles_y - first);
    if (tid >= F::consumers * 128) {
        produce_tiles<N, Stages, F::row_floats>(p, stages, full0, empty0, x0, first, count);
        return;
    }
    const int wg = tid / 128, t = tid % 128, warp = t / 32, lane = t % 32;
    unsigned char *b_hi = b_all + wg * 2 * L::b_part, *b_mid = b_hi + L::b_part;
    float *unscale = unscale_all + wg * N;
    const uint32_t ah = shared_address(a_hi), am = shared_address(a_mid);
    const uint32_t bh = shared_address(b_hi), bm = shared_address(b_mid);
    for (int i = wg; i < count; i += F::consumers) {
        const int s = i % Stages, round = i / Stages, y0 = (first + i) * N;
        mbarrier_wait(full0 + 8 * s, round & 1);
        const float *stage = stages + s * N * F::row_floats;
#pragma unroll 2
        for (int r = 0; r < N / 4; r++) {
            const int n = warp + 4 * r;
            split_staged_row<L, F::row_floats>(stage + n * F::row_floats, n, lane, b_hi, b_mid, unscale[n],
                                               p.tap_exponent);
        }
        fence_proxy_async();
        warpgroup_sync(wg);
        if (t == 0) {
            mbarrier_arrive(empty0 + 8 * s);  // the stage is read
        }
        float acc[MB][N / 2];
        wgmma_fence();
        issue_products<L, MB, N>(acc, ah, am, bh, bm);
        wgmma_commit();
        wgmma_wait<0>();
#pragma unroll
        for (int mb = 0; mb < MB; mb++) {
            store_block<N>(acc[mb], p, x0 + 64 * mb, y0, unscale);
        }
        warpgroup_sync(wg);  // the products have read B and every unscale is used
    }
}

template <int KP, int MB, int N, int Stages>
float run_v4(const Args &a, int reps, cudaStream_t s) {
    using F = V4<KP, MB, N, Stages>;
    constexpr int bytes = F::bytes;
    if (bytes > 227 * 1024) {
        std::printf("  form 4 KP %d MB %d N %d stages %d: %d bytes of shared memory, past the 227 KiB\n", KP, MB, N,
                    Stages, bytes);
        return 1e30f;
    }
    const int blocks_x = (a.width + 64 * MB - 1) / (64 * MB), tiles_y = (a.height + N - 1) / N;
    const dim3 grid(blocks_x, (tiles_y + a.tiles_per_block - 1) / a.tiles_per_block);
    CHECK(cudaFuncSetAttribute(row_pass_v4<KP, MB, N, Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
    return median_ms([&] { row_pass_v4<KP, MB, N, Stages><<<grid, F::threads, bytes, s>>>(a); }, reps, s);
}

// The fifth form: the fourth with the taps' Toeplitz block in registers (each warp's 16
// rows of each k16 slice, both parts: no shared memory for A, no reads of it), and two B
// buffers a consumer: the split of its next tile runs while the tensor cores multiply the
// current one. N = 32 rows a tile.
//
// The sixth form (Consumers = 3): three consumer warpgroups and a producer warpgroup whose
// registers go to the consumers (setmaxnreg), so that 12 warps an SM split, multiply and
// store instead of 8; the warpgroup index is made warp-uniform (a shuffle from lane 0) so
// that the descriptors it enters can stay in uniform registers.
template <int KP, int MB, int Stages, int Consumers = 2>
struct V5 {
    static constexpr int N = 32;
    using L = V2<KP, MB, N>;
    static constexpr int consumers = Consumers;
    static constexpr bool producer_group = Consumers > 2;
    static constexpr int threads = consumers * 128 + (producer_group ? 128 : 32);
    // Registers a consumer thread takes once the producer warpgroup gives up its own (40):
    // 65536 in all, in steps of 8.
    static constexpr int consumer_registers = (65536 / 128 - 40) / consumers / 8 * 8;
    static constexpr int row_floats = L::atoms * 64;
    static constexpr int stage_bytes = N * row_floats * 4;
    static constexpr int bytes =
        1024 + consumers * 4 * L::b_part + Stages * stage_bytes + consumers * 2 * N * 4 + 2 * Stages * 8;
};

template <int KP, int MB, int Stages, int Consumers>
__global__ void __launch_bounds__(V5<KP, MB, Stages, Consumers>::threads, 1) row_pass_v5(Args p) {
    using F = V5<KP, MB, Stages, Consumers>;
    using L = V2<KP, MB, 32>;
    constexpr int N = 32;
    extern __shared__ unsigned char raw[];
    const uint32_t raw_address = shared_address(raw);
    unsigned char *base = raw + ((1024 - (raw_address & 1023)) & 1023);
    unsigned char *b_all = base;  // consumer c, buffer b, part h at ((c * 2 + b) * 2 + h) * b_part
    float *stages = reinterpret_cast<float *>(base + F::consumers * 4 * L::b_part);
    float *unscale_all = stages + Stages * N * F::row_floats;  // [consumer][buffer][N]
    uint64_t *bars = reinterpret_cast<uint64_t *>(unscale_all + F::consumers * 2 * N);
    const uint32_t full0 = shared_address(bars), empty0 = full0 + 8 * Stages;
    const int tid = int(threadIdx.x);
    if (tid == 0) {
        for (int s = 0; s < Stages; s++) {
            mbarrier_init(full0 + 8 * s, 1);
            mbarrier_init(empty0 + 8 * s, 1);
        }
        mbarrier_init_fence();
    }
    __syncthreads();

    const int x0 = int(blockIdx.x) * 64 * MB;
    const int tiles_y = (p.height + N - 1) / N, first = int(blockIdx.y) * p.tiles_per_block;
    const int count = min(p.tiles_per_block, tiles_y - first);
    if constexpr (F::producer_group) {
        if (tid >= F::consumers * 128) {
            set_max_registers_dec<40>();
            if (tid >= F::consumers * 128 + 32) {
                return;  // the producer warpgroup's other warps
            }
        } else {
            set_max_registers_inc<F::consumer_registers>();
        }
    }
    if (tid >= F::consumers * 128) {
        produce_tiles<N, Stages, F::row_floats>(p, stages, full0, empty0, x0, first, count);
        return;
    }
    const int wg = __shfl_sync(0xffffffffu, tid / 128, 0), t = tid % 128, warp = t / 32, lane = t % 32, g = lane / 4,
              q = lane % 4;
    // The Toeplitz block's fragments: A(m, k) = taps[k - m] scaled, rows m = 16 warp + g (+ 8),
    // columns k = 16 s + 2 q (+ 1) (+ 8).
    uint32_t a_hi[L::KS][4], a_mid[L::KS][4];
#pragma unroll
    for (int ks = 0; ks < L::KS; ks++) {
#pragma unroll
        for (int r = 0; r < 4; r++) {
            const int m = 16 * warp + g + (r % 2) * 8, k = 16 * ks + 2 * q + (r / 2) * 8;
            float v[2];
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int i = k + h - m;
                v[h] = i >= 0 && i < p.k ? __ldg(p.taps + i) * p.tap_scale : 0.0f;
            }
            split_pair(v[0], v[1], a_hi[ks][r], a_mid[ks][r]);
        }
    }
    float *unscale = unscale_all + wg * 2 * N;
    const auto split = [&](int i, int buffer) {
        const int s = i % Stages;
        mbarrier_wait(full0 + 8 * s, (i / Stages) & 1);
        const float *stage = stages + s * N * F::row_floats;
        unsigned char *hi = b_all + (wg * 2 + buffer) * 2 * L::b_part, *mid = hi + L::b_part;
        // MODE=2: each B buffer split once, later tiles multiply stale parts (a time breakdown).
        const int rows = p.mode == 2 && i >= 2 * F::consumers ? 0 : N / 4;
#pragma unroll 2
        for (int r = 0; r < rows; r++) {
            const int n = warp + 4 * r;
            split_staged_row<L, F::row_floats>(stage + n * F::row_floats, n, lane, hi, mid, unscale[buffer * N + n],
                                               p.tap_exponent);
        }
        fence_proxy_async();
        warpgroup_sync(wg);
        if (t == 0) {
            mbarrier_arrive(empty0 + 8 * s);  // the stage is read
        }
    };
    if (wg >= count) {
        return;
    }
    split(wg, 0);
    int buffer = 0;
    for (int i = wg; i < count; i += F::consumers, buffer ^= 1) {
        const int y0 = (first + i) * N;
        // One descriptor a buffer; each product's is it plus a constant (its start field).
        const uint64_t d_hi = wgmma_sw128_descriptor(shared_address(b_all + (wg * 2 + buffer) * 2 * L::b_part));
        const uint64_t d_mid = d_hi + (L::b_part >> 4);
        float acc[MB][N / 2];
        wgmma_fence();
#pragma unroll
        for (int mb = 0; mb < MB; mb++) {
#pragma unroll
            for (int ks = 0; ks < L::KS; ks++) {
                const uint32_t b_at = (mb + ks / 4) * L::plane + (ks % 4) * 32;
                const uint64_t db_hi = d_hi + (b_at >> 4), db_mid = d_mid + (b_at >> 4);
                wgmma_m64n32k16_ra(acc[mb], a_mid[ks], db_hi, ks > 0);
                wgmma_m64n32k16_ra(acc[mb], a_hi[ks], db_mid, true);
                wgmma_m64n32k16_ra(acc[mb], a_hi[ks], db_hi, true);
            }
        }
        wgmma_commit();
        if (i + F::consumers < count) {
            split(i + F::consumers, buffer ^ 1);
        }
        float u[N / 8][2];
#pragma unroll
        for (int j = 0; j < N / 8; j++) {
            const float2 pair = *reinterpret_cast<const float2 *>(unscale + buffer * N + 8 * j + 2 * q);
            u[j][0] = pair.x;
            u[j][1] = pair.y;
        }
        wgmma_wait<0>();
        // Rows y0 + 8 j + 2 q + h, columns x0 + 64 mb + 16 warp + g (+ 8): one base pointer,
        // constant offsets; tests only in a tile at the image's right or bottom edge.
        float *o = p.out + int64_t(y0 + 2 * q) * p.out_pitch + x0 + 16 * warp + g;
        if (p.mode == 1) {
            // MODE=1: no stores but where a sum is NaN (never here), so that the products stay.
            float any = 0.0f;
#pragma unroll
            for (int mb = 0; mb < MB; mb++) {
#pragma unroll
                for (int i2 = 0; i2 < N / 2; i2++) {
                    any += acc[mb][i2];
                }
            }
            if (any != any) {
                o[0] = any;
            }
        } else if (y0 + N <= p.height && x0 + 64 * MB <= p.width) {
#pragma unroll
            for (int j = 0; j < N / 8; j++) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    float *row = o + (8 * j + h) * p.out_pitch;
#pragma unroll
                    for (int mb = 0; mb < MB; mb++) {
                        row[64 * mb] = acc[mb][4 * j + h] * u[j][h];
                        row[64 * mb + 8] = acc[mb][4 * j + 2 + h] * u[j][h];
                    }
                }
            }
        } else {
#pragma unroll
            for (int j = 0; j < N / 8; j++) {
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    if (y0 + 8 * j + 2 * q + h < p.height) {
                        float *row = o + (8 * j + h) * p.out_pitch;
#pragma unroll
                        for (int mb = 0; mb < MB; mb++) {
                            const int xa = x0 + 64 * mb + 16 * warp + g;
                            if (xa < p.width) {
                                row[64 * mb] = acc[mb][4 * j + h] * u[j][h];
                            }
                            if (xa + 8 < p.width) {
                                row[64 * mb + 8] = acc[mb][4 * j + 2 + h] * u[j][h];
                            }
                        }
                    }
                }
            }
        }
        warpgroup_sync(wg);  // B[buffer] and its unscale are free for the tile after next
    }
}

template <int KP, int MB, int Stages, int Consumers = 2>
float run_v5(const Args &a, int reps, cudaStream_t s) {
    using F = V5<KP, MB, Stages, Consumers>;
    constexpr int bytes = F::bytes;
    if (bytes > 227 * 1024) {
        std::printf("  form 5 KP %d MB %d stages %d: %d bytes of shared memory, past the 227 KiB\n", KP, MB, Stages,
                    bytes);
        return 1e30f;
    }
    const int blocks_x = (a.width + 64 * MB - 1) / (64 * MB), tiles_y = (a.height + 31) / 32;
    const dim3 grid(blocks_x, (tiles_y + a.tiles_per_block - 1) / a.tiles_per_block);
    CHECK(cudaFuncSetAttribute(row_pass_v5<KP, MB, Stages, Consumers>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               bytes));
    return median_ms([&] { row_pass_v5<KP, MB, Stages, Consumers><<<grid, F::threads, bytes, s>>>(a); }, reps, s);
}

template <int KP, int Chain>
float run(const Args &a, int reps, cudaStream_t s) {
    const int blocks_x = (a.width + 63) / 64, tiles_y = (a.height + kN - 1) / kN;
    const dim3 grid(blocks_x, (tiles_y + a.tiles_per_block - 1) / a.tiles_per_block);
    CHECK(cudaFuncSetAttribute(row_pass<KP, Chain>, cudaFuncAttributeMaxDynamicSharedMemorySize, shared_bytes<KP>));
    return median_ms([&] { row_pass<KP, Chain><<<grid, kThreads, shared_bytes<KP>, s>>>(a); }, reps, s);
}

// What a run measures (the environment's FORM, MB, N, WG, CHAIN).
struct Options {
    int form, mb, n, wgs, chain;
};

// The median time of the chosen form and configuration at this KP; -1 where KP is not built,
// 1e30 where the form's shared memory does not fit.
float time_form(const Options &o, int kp, const Args &a, int reps, cudaStream_t s) {
    const int mb = o.mb, n = o.n;
    switch (o.form) {
        case 6:
            return for_kp<80, 96, 128, 160, 192>(kp, [&](auto c) {
                constexpr int KP = decltype(c)::value;
                return mb == 1 ? run_v5<KP, 1, 3, 3>(a, reps, s) : run_v5<KP, 2, 3, 3>(a, reps, s);
            });
        case 5:
            return for_kp<80, 96, 128, 160, 192, 224>(kp, [&](auto c) {
                constexpr int KP = decltype(c)::value;
                if (mb == 1) {  // four stages where they fit, else two
                    return V5<KP, 1, 4>::bytes <= 227 * 1024 ? run_v5<KP, 1, 4>(a, reps, s)
                                                             : run_v5<KP, 1, 2>(a, reps, s);
                }
                return mb == 3 ? run_v5<KP, 3, 3>(a, reps, s) : run_v5<KP, 2, 3>(a, reps, s);
            });
        case 4:
            return for_kp<80, 96, 128, 160, 192>(kp, [&](auto c) {
                constexpr int KP = decltype(c)::value;
                return n == 32 ? (mb == 2 ? run_v4<KP, 2, 32, 4>(a, reps, s) : run_v4<KP, 4, 32, 3>(a, reps, s))
                               : (mb == 2 ? run_v4<KP, 2, 64, 2>(a, reps, s) : run_v4<KP, 1, 64, 3>(a, reps, s));
            });
        case 3:
            return for_kp<80, 96, 128, 160, 192>(kp, [&](auto c) {
                constexpr int KP = decltype(c)::value;
                return mb == 1   ? run_v3<KP, 1, 64>(a, reps, s)
                       : mb == 3 ? run_v3<KP, 3, 64>(a, reps, s)
                                 : run_v3<KP, 2, 64>(a, reps, s);
            });
        case 2:
            return for_kp<80, 96, 128, 160, 192>(kp, [&](auto c) {
                constexpr int KP = decltype(c)::value;
                if (o.wgs == 2) {
                    return mb == 2 ? run_v2<KP, 2, 64, 4, 2>(a, reps, s) : run_v2<KP, 1, 64, 4, 2>(a, reps, s);
                }
                if (o.wgs == 3) {
                    return mb == 2 ? run_v2<KP, 2, 64, 4, 3>(a, reps, s) : run_v2<KP, 1, 64, 4, 3>(a, reps, s);
                }
                return mb == 2 ? (n == 64 ? run_v2<KP, 2, 64, 4>(a, reps, s) : run_v2<KP, 2, 128, 4>(a, reps, s))
                               : (n == 64 ? run_v2<KP, 4, 64, 4>(a, reps, s) : run_v2<KP, 4, 128, 4>(a, reps, s));
            });
        default:
            return for_kp<80, 96, 112, 128, 144, 160, 176, 192>(kp, [&](auto c) {
                constexpr int KP = decltype(c)::value;
                return o.chain == 2   ? run<KP, 2>(a, reps, s)
                       : o.chain == 8 ? run<KP, 8>(a, reps, s)
                                      : run<KP, 4>(a, reps, s);
            });
    }
}

int main(int argc, char **argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s K [WIDTH HEIGHT]\n", argv[0]);
        return 2;
    }
    const int k = std::atoi(argv[1]);
    const int w = argc > 3 ? std::atoi(argv[2]) : 4096, h = argc > 3 ? std::atoi(argv[3]) : 4096;
    const int kp = toeplitz_depth(k);
    const int64_t in_pitch = (w + 512 + 31) / 32 * 32, out_pitch = (w + 31) / 32 * 32;
    std::mt19937 rng(12345);
    std::uniform_real_distribution<float> uni(-1.0f, 1.0f);
    std::vector<float> in(size_t(in_pitch) * h, 0.0f);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w + k - 1; x++) {
            in[size_t(y) * in_pitch + x] = uni(rng) * (y % 7 == 3 ? 1e4f : 1.0f);  // rows of another scale
        }
    }
    const std::vector<float> taps = probe_taps(k, rng);
    const int te = taps_exponent(taps);

    float *din, *dout, *dtaps;
    CHECK(cudaMalloc(&din, in.size() * 4));
    CHECK(cudaMalloc(&dout, size_t(out_pitch) * h * 4));
    CHECK(cudaMalloc(&dtaps, size_t(k) * 4));
    CHECK(cudaMemcpy(din, in.data(), in.size() * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dtaps, taps.data(), size_t(k) * 4, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(dout, 0xff, size_t(out_pitch) * h * 4));  // poisoned: NaN
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    int sms = 0;
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));

    Args a{din, in_pitch, dout, out_pitch, w, h, dtaps, k, std::ldexp(1.0f, te), te, 1, std::getenv("HOLD") ? 1 : 0, 0};
    const char *chain_env = std::getenv("CHAIN");
    const int chain = chain_env ? std::atoi(chain_env) : 4;
    const char *tpb_env = std::getenv("TILES");
    const int form = std::getenv("FORM") ? std::atoi(std::getenv("FORM")) : 2;
    const int mb = std::getenv("MB") ? std::atoi(std::getenv("MB")) : 4;
    const int n = std::getenv("N") ? std::atoi(std::getenv("N")) : 64;
    const int wgs = std::getenv("WG") ? std::atoi(std::getenv("WG")) : 1;
    const Options o{form, mb, n, wgs, chain};
    a.mode = std::getenv("MODE") ? std::atoi(std::getenv("MODE")) : 0;
    const int reps = 20;
    float best = 1e30f;
    int best_tpb = 0;
    for (int tpb : {1, 2, 4, 8, 16, 32}) {
        if (tpb_env && std::atoi(tpb_env) != tpb) continue;
        a.tiles_per_block = tpb;
        const float t = time_form(o, kp, a, reps, s);
        if (t < 0) {
            std::fprintf(stderr, "K %d not built (KP %d)\n", k, kp);
            return 2;
        }
        if (t > 1e29f) {
            return 0;  // the form's shared memory does not fit this K
        }
        std::printf("K %d %dx%d form %d, MB %d, N %d, warpgroups %d, chain %d, tiles/block %d: %.4f ms\n", k, w, h,
                    o.form, o.mb, o.n, o.wgs, o.chain, tpb, t);
        if (t < best) {
            best = t;
            best_tpb = tpb;
        }
    }
    // Check every output of the last run against float64 sums.
    std::vector<float> out(size_t(out_pitch) * h);
    CHECK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
    BoundCheck check{k};
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            double sum = 0, mag = 0;
            for (int i = 0; i < k; i++) {
                const double term = double(taps[i]) * in[size_t(y) * in_pitch + x + i];
                sum += term;
                mag += std::fabs(term);
            }
            check.add(x, y, out[size_t(y) * out_pitch + x], sum, mag);
        }
    }
    std::printf("K %d check: %lld of %lld outside the bound, largest error %.3f of (K + 4) 2^-24 sum|terms|\n", k,
                (long long)check.bad, (long long)w * h, check.worst);
    // The memory floor of one pass: a copy of the same bytes.
    const float copy = copy_ms(din, in_pitch, dout, out_pitch, w, h, s);
    std::printf(
        "K %d %dx%d best %.4f ms (tiles/block %d), copy %.4f ms, %d SMs, %.1f effective TFLOPS (2 K per output)\n", k,
        w, h, best, best_tpb, copy, sms, 2.0 * k * w * double(h) / (best * 1e-3) / 1e12);
    return check.bad == 0 || a.mode != 0 ? 0 : 1;
}
