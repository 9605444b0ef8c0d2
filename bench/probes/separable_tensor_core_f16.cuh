// An experiment kept as a probe (bench/probes/separable_sliding_probe.cu includes it after
// separable_tensor_core.cuh, whose layout, strips and exact fallbacks it shares): the
// float32 separable pass with its multiply-adds on float16 tensor cores, mma.sync
// m16n8k16, the step the 3xTF32 experiment beside it named and did not take. Not adopted:
// on an H100 (bench/results/h100/separable/tensor-core-f16-2026-11-27/RUN.md) it is slower
// than the CUDA-core pass at every K (4096^2: 0.144 against 0.078 ms at K = 7, 0.227
// against 0.207 at K = 63, 0.450 against 0.402 at K = 127). Its tensor work is small (4.3 M
// HMMA at K = 63, the tensor pipe 17 % busy); the time goes to what surrounds it: the
// staging, the per-chunk largest magnitudes, the split repeated by every warp whose window
// holds a sample, the epilogues (half the 92 M instructions are integer and control).
//
// float16 products run at twice TF32's rate and a 16-sample block of a line feeds twice the
// multiply-adds of an 8-sample one: about half the mma of the TF32 form per output.
//
// Each pass is a sum of 16 x 8 x 16 products of 16 lines of samples by 16 x 8 Toeplitz
// blocks of the taps, B_j(r, n) = tap(16 j + r - n), so 8 outputs along a line take
// ceil((k + 7) / 16) blocks. An A operand (16 samples) is two 8-sample half-blocks; a warp's
// four 8-output tiles share a window of six half-blocks that slides two a step.
//
// float32 operands are carried as two float16 parts at their own weight (split_f32.h's
// split_in_place): v s = hi + mid, |error| <= 2^-22 |v s|; the products hi.hi, hi.mid and
// mid.hi are summed (mid.mid, 2^-22 of a term, is dropped). float16's range needs a scale:
// 2^e puts the largest magnitude of what is split in [2^14, 2^15):
//   - the taps: one scale per tap list;
//   - the row pass: one scale per staged chunk (32 rows of the strip and its apron), its
//     largest magnitude found by each thread over the samples it copied;
//   - the column pass: one scale per output chunk, from the largest row sum of the ring
//     chunks its window reads (each warp's largest, kept per ring chunk).
// The error of a sum is so bounded relative to the largest sample of its chunk times the
// sum of the taps' magnitudes, not its own terms' magnitudes (as the library's split on
// tensor cores is bounded by the image's largest sample; halconv.h).
// A chunk whose largest magnitude is not finite (a NaN or an infinity among its samples or
// row sums) or too small for a normal scale takes the CUDA-core sums, as do its windows:
// samples are tested, not sums (the TF32 form let a NaN through as finite sums).
#pragma once

#include <cuda_fp16.h>

#include <algorithm>

#include "common/split_f32.h"

namespace halconv::rk::sep {
namespace {

using split_f32::split_pair;

// Toeplitz blocks of 16 taps per list: ceil((k + 7) / 16).
__host__ __device__ constexpr int64_t f16_blocks(int64_t k) {
    return (k + 22) / 16;
}

// Bytes of one block's fragments: per lane {hi b0, hi b1, mid b0, mid b1}.
inline constexpr size_t f16_block_bytes = 32 * 16;
// Entries of a row of the max tables: one per warp (a block has at most 8).
inline constexpr int f16_max_warps = 8;

// Where the shared memory of the f16 kernel lies (bytes from its start): the taps as the
// exact fallback reads them, the split Toeplitz blocks, the tables of largest magnitudes
// (one row per ring chunk, then the stage's), the ring and the stages.
struct F16Offsets {
    size_t frags, maxes, taps_end;
};

__host__ __device__ inline F16Offsets f16_offsets(int64_t kw, int64_t kh, int lag) {
    const auto aligned = [](size_t b) { return (b + 127) / 128 * 128; };
    F16Offsets o;
    o.frags = aligned(size_t((kw + 7) / 8 * 8 + (kh + 7) / 8 * 8) * 4);
    o.maxes = o.frags + size_t(f16_blocks(kw) + f16_blocks(kh)) * f16_block_bytes;
    o.taps_end = o.maxes + aligned(size_t(lag + 2) * f16_max_warps * 4);
    return o;
}

inline TcLayout f16_layout_for(int tile_columns, int stages, int64_t kw, int64_t kh) {
    TcLayout l;
    if (kw < 1 || kh < 1 || kw > (int64_t(1) << 20) || kh > (int64_t(1) << 20)) {
        l.total_bytes = SIZE_MAX;
        return l;
    }
    const int64_t chunk = tensor_core_chunk_rows;
    const int64_t jr = f16_blocks(kw), jc = f16_blocks(kh);
    // The column pass's window reads ring rows up to 16 jc + 24 from its chunk's first
    // (the last tile starts 24 rows in; the window runs two half-blocks past its last
    // block), the exact fallback (slide) up to a block past its last tap's.
    const int64_t reach = std::max<int64_t>(16 * jc + 24, 24 + 8 * ((kh + 7) / 8 + 1));
    l.tile_columns = tile_columns;
    l.chunk_rows = int(chunk);
    l.stages = stages;
    l.lag = int((reach - 1) / chunk);
    l.ring_rows = int((l.lag + 1) * chunk);
    // An odd multiple of 4 floats: the column pass's loads (lane (g, t) reads rows 2t and
    // 2t + 1 of column g) hit distinct banks.
    l.ring_pitch = int((tile_columns / 4 | 1) * 4);
    l.stage_width = int(std::max<int64_t>(tile_columns + 16 * jr - 8, tile_columns + 8 * ((kw + 7) / 8)));
    // An odd multiple of 8 floats: the row pass's float2 loads (lane (g, t) reads columns
    // 2t, 2t + 1 of row g, a half warp at a time) hit distinct banks.
    l.stage_pitch = int(((l.stage_width + 7) / 8 | 1) * 8);
    const auto aligned = [](size_t b) { return (b + 127) / 128 * 128; };
    l.taps_bytes = f16_offsets(kw, kh, l.lag).taps_end;
    l.ring_bytes = aligned(size_t(l.ring_rows) * size_t(l.ring_pitch) * 4);
    l.stage_bytes = aligned(size_t(chunk) * size_t(l.stage_pitch) * 4);
    l.total_bytes = l.taps_bytes + l.ring_bytes + size_t(stages) * l.stage_bytes;
    return l;
}

// As tensor_core_layout, for the f16 kernel (from min_taps = kw + kh on); among layouts
// with as many warps the wider strip (half the rows staged per output).
inline TcLayout f16_layout(int64_t kw, int64_t kh, size_t shared_per_block, size_t shared_per_sm, int64_t min_taps) {
    if (kw + kh < min_taps) {
        return TcLayout{};
    }
    return choose_tc_layout(f16_layout_for, kw, kh, shared_per_block, shared_per_sm, false);
}

// d += A B, A 16x16 and B 16x8 in float16 (two per register, the lower index in the low
// half), d in f32. Per lane (g, t):
//   A (row-major): a0 = A(g, 2t..2t+1), a1 = A(g+8, 2t..2t+1), a2 = A(g, 2t+8..), a3 = A(g+8, 2t+8..)
//   B (col-major): b0 = B(2t..2t+1, g), b1 = B(2t+8..2t+9, g)
//   d: [0..1] = (g, 2t..2t+1), [2..3] = (g+8, 2t..2t+1)
__device__ inline void mma_m16n8k16_f16(float (&d)[4], uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0,
                                        uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

__device__ inline uint32_t warp_max(uint32_t v) {
#pragma unroll
    for (int s = 16; s > 0; s >>= 1) {
        v = max(v, __shfl_xor_sync(0xffffffffu, v, s));
    }
    return v;
}

// The scale exponent e for a largest magnitude given by its bits (2^e of it in
// [2^14, 2^15)), or no_scale where the tensor cores cannot take it: not finite, or so small
// that 2^e or 2^-e would not be a normal float. All zeros: 0.
inline constexpr int no_scale = 1000;
__device__ inline int scale_for(uint32_t bits) {
    if (bits == 0) {
        return 0;
    }
    const int biased = int(bits >> 23);
    return biased < 14 || biased > 254 ? no_scale : 141 - biased;
}

// 16 lines x 8 samples as float16 parts, lane (g, t) holding lines g and g + 8, samples
// 2t and 2t + 1.
struct HalfBlock {
    uint32_t hi[2], mid[2];
};

// Step j of f16_slide with S = j % 3: the window holds half-blocks 2j .. 2j + 4 in slots
// (2S + i) % 6; tile n takes half-blocks n + 2j and n + 2j + 1 as A. Half-blocks 2j + 5 and
// 2j + 6 are loaded for the next step, into the slots of 2j - 1 and 2j.
template <int S, typename Load>
__device__ __forceinline__ void f16_step(float (&acc)[tc_tiles][4], float (&small)[tc_tiles][4], HalfBlock (&win)[6],
                                         const uint4 *frags, int j, int blocks, Load &load) {
    if (j + 1 < blocks) {
        load(2 * j + 5, win[(2 * S + 5) % 6]);
    }
    const uint4 f = frags[j * 32 + (threadIdx.x & 31)];
#pragma unroll
    for (int n = 0; n < tc_tiles; n++) {
        const HalfBlock &l = win[(2 * S + n) % 6], &r = win[(2 * S + n + 1) % 6];
        mma_m16n8k16_f16(small[n], l.mid[0], l.mid[1], r.mid[0], r.mid[1], f.x, f.y);
        mma_m16n8k16_f16(small[n], l.hi[0], l.hi[1], r.hi[0], r.hi[1], f.z, f.w);
        mma_m16n8k16_f16(acc[n], l.hi[0], l.hi[1], r.hi[0], r.hi[1], f.x, f.y);
    }
    if (j + 1 < blocks) {
        load(2 * j + 6, win[(2 * S) % 6]);
    }
}

// acc[n] = sum_{j < blocks} A(half-blocks n + 2j, n + 2j + 1) B_j for the warp's four tiles
// n, scaled: load(h, s) splits half-block h of the warp's lines (samples 8h .. 8h + 7 from
// the run's start) into s, frags holds the blocks B_j split. Three steps at a time, so
// that the window rotates through register names instead of moving.
template <typename Load>
__device__ __forceinline__ void f16_slide(float (&acc)[tc_tiles][4], const uint4 *frags, int blocks, Load &&load) {
    static_assert(tc_tiles == 4, "a window of six half-blocks");
    HalfBlock win[6];
#pragma unroll
    for (int h = 0; h < 5; h++) {
        load(h, win[h]);
    }
    float small[tc_tiles][4] = {};
    int j = 0;
    for (; j + 3 <= blocks; j += 3) {
        f16_step<0>(acc, small, win, frags, j, blocks, load);
        f16_step<1>(acc, small, win, frags, j + 1, blocks, load);
        f16_step<2>(acc, small, win, frags, j + 2, blocks, load);
    }
    if (j < blocks) {
        f16_step<0>(acc, small, win, frags, j, blocks, load);
    }
    if (j + 1 < blocks) {
        f16_step<1>(acc, small, win, frags, j + 1, blocks, load);
    }
#pragma unroll
    for (int n = 0; n < tc_tiles; n++) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            acc[n][i] += small[n][i];
        }
    }
}

// The Toeplitz blocks of `taps` (k of them, reversed when flip), times 2^scale, split into
// float16 parts in the B fragment's order: lane (g, t) of block j holds B_j(r, g) for r =
// 2t, 2t + 1 (b0) and 2t + 8, 2t + 9 (b1), B_j(r, n) = tap(16 j + r - n), 0 outside the list.
template <int Threads>
__device__ void stage_f16_fragments(uint4 *frags, const float *taps, int k, bool flip, int scale) {
    const int blocks = int(f16_blocks(k));
    const float s = scalbnf(1.0f, scale);
    for (int e = threadIdx.x; e < blocks * 32; e += Threads) {
        const int j = e / 32, lane = e % 32, g = lane >> 2, t = lane & 3;
        float b[4];
#pragma unroll
        for (int h = 0; h < 4; h++) {
            const int i = 16 * j + 2 * t + (h & 1) + 8 * (h >> 1) - g;
            b[h] = i >= 0 && i < k ? taps[flip ? k - 1 - i : i] * s : 0.0f;
        }
        uint32_t h0, m0, h1, m1;
        split_pair(b[0], b[1], h0, m0);
        split_pair(b[2], b[3], h1, m1);
        frags[e] = make_uint4(h0, h1, m0, m1);
    }
}

// The scale exponent of a tap list (every thread computes it, a warp at a time).
__device__ inline int tap_scale(const float *taps, int k) {
    uint32_t m = 0;
    for (int i = threadIdx.x & 31; i < k; i += 32) {
        m = max(m, magnitude_bits(taps[i]));
    }
    return scale_for(warp_max(m));
}

// The largest magnitude (as bits) of the samples this thread copied into a stage buffer
// (stage_chunk's split of rows and columns over warps and lanes).
template <int Warps>
__device__ uint32_t own_stage_max(const float *stage, int chunk_rows, int width, int pitch) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    uint32_t m = 0;
    for (int r = warp; r < chunk_rows; r += Warps) {
        const float *row = stage + r * pitch;
        for (int c = lane; c < width; c += 32) {
            m = max(m, magnitude_bits(row[c]));
        }
    }
    return m;
}

// acc times 2^-taps and 2^-samples, one factor at a time (each a normal float; their
// product may not be).
__device__ inline void unscale(float (&acc)[tc_tiles][4], int taps, int samples) {
    const float u_taps = scalbnf(1.0f, -taps), u_samples = scalbnf(1.0f, -samples);
#pragma unroll
    for (int n = 0; n < tc_tiles; n++) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            acc[n][i] = acc[n][i] * u_taps * u_samples;
        }
    }
}

template <typename O, int TW, int stages>
__global__ void __launch_bounds__(2 * TW, 32 * tensor_core_max_warps_per_sm / (2 * TW))
    separable_f16_kernel(const SlidingArgs<float, float> p) {
    constexpr int Threads = 2 * TW, Warps = Threads / 32, CH = tensor_core_chunk_rows;
    static_assert(Warps == TW / 16 && CH == 32 && Warps <= f16_max_warps, "as the TF32 kernel");
    extern __shared__ __align__(128) unsigned char smem[];
    const SlidingLayout &l = p.layout;
    const F16Offsets off = f16_offsets(p.kw, p.kh, l.lag);
    const auto [row_taps, col_taps, ring, stage] = probe_smem(smem, p, stages);
    uint4 *const row_frags = reinterpret_cast<uint4 *>(smem + off.frags);
    uint4 *const col_frags = row_frags + f16_blocks(p.kw) * 32;
    // Row c % ring_chunks: each warp's largest row sum of ring chunk c; row lag + 1: each
    // warp's largest staged sample of the current chunk.
    uint32_t *const maxes = reinterpret_cast<uint32_t *>(smem + off.maxes);

    const auto [x0, y0, stage_x, rows, chunks, ring_chunks] = tc_band(p, TW);
    const int jr = int(f16_blocks(p.kw)), jc = int(f16_blocks(p.kh));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int sp = l.stage_pitch, rp = l.ring_pitch;
    uint32_t *const stage_maxes = maxes + ring_chunks * f16_max_warps;

    stage_chunk<Warps>(p, stage(0), CH, p.base_y + y0, stage_x);
    cp_async_commit();
    stage_taps<Threads>(p, row_taps);
    const int row_scale = tap_scale(p.row_taps, p.kw), col_scale = tap_scale(p.col_taps, p.kh);
    stage_f16_fragments<Threads>(row_frags, p.row_taps, p.kw, p.flip, row_scale == no_scale ? 0 : row_scale);
    stage_f16_fragments<Threads>(col_frags, p.col_taps, p.kh, p.flip, col_scale == no_scale ? 0 : col_scale);

    for (int c = 0; c < chunks; c++) {
        cp_async_wait<0>();
        {
            const uint32_t m = warp_max(own_stage_max<Warps>(stage(c), CH, l.stage_width, sp));
            if (lane == 0) {
                stage_maxes[warp] = m;
            }
        }
        __syncthreads();  // chunk c is staged, its largest sample known; the ring slot below has been read
        uint32_t stage_bits = 0;
#pragma unroll
        for (int w = 0; w < Warps; w++) {
            stage_bits = max(stage_bits, stage_maxes[w]);
        }
        if (stages == 2 && c + 1 < chunks) {
            stage_chunk<Warps>(p, stage(c + 1), CH, p.base_y + y0 + int64_t(c + 1) * CH, stage_x);
        }
        cp_async_commit();
        {
            // Row pass: rows 16 rg .. + 15 of the chunk, columns 32 cr .. + 31.
            const int rg = warp & 1, cr = warp >> 1;
            const float *const src = stage(c);
            float *const ring_rows = ring + (c % ring_chunks) * CH * rp;
            const int e = scale_for(stage_bits);
            uint32_t sums_bits = 0;
            if (e != no_scale && row_scale != no_scale) {
                const float s = scalbnf(1.0f, e);
                const float *const a = src + (16 * rg + g) * sp + 32 * cr + 2 * t;
                float acc[tc_tiles][4] = {};
                f16_slide(acc, row_frags, jr, [&](int h, HalfBlock &b) {
                    const float2 v0 = *reinterpret_cast<const float2 *>(a + 8 * h);
                    const float2 v1 = *reinterpret_cast<const float2 *>(a + 8 * h + 8 * sp);
                    split_pair(v0.x * s, v0.y * s, b.hi[0], b.mid[0]);
                    split_pair(v1.x * s, v1.y * s, b.hi[1], b.mid[1]);
                });
                unscale(acc, row_scale, e);
#pragma unroll
                for (int n = 0; n < tc_tiles; n++) {
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        sums_bits = max(sums_bits, magnitude_bits(acc[n][i]));
                    }
                }
                store_row_tiles(acc, ring_rows, rp, rg, cr);
            } else {
                sums_bits = exact_row_sums(p, row_taps, src, sp, ring_rows, rp, rg, cr);
            }
            sums_bits = warp_max(sums_bits);
            if (lane == 0) {
                maxes[(c % ring_chunks) * f16_max_warps + warp] = sums_bits;
            }
        }
        __syncthreads();  // the chunk's row sums and their largest are in the ring; stage(c) has been read
        if (stages == 1 && c + 1 < chunks) {
            stage_chunk<Warps>(p, stage(c + 1), CH, p.base_y + y0 + int64_t(c + 1) * CH, stage_x);
            cp_async_commit();
        }
        if (c >= l.lag) {
            // Column pass: output chunk d, columns 16 w .. + 15, its 32 rows; the window
            // reads ring chunks d .. c (all the ring holds).
            const int d = c - l.lag;
            const int first = (d % ring_chunks) * CH;  // ring row of the chunk's first
            uint32_t window_bits = 0;
            for (int i = lane; i < ring_chunks * f16_max_warps; i += 32) {
                window_bits = max(window_bits, (i % f16_max_warps) < Warps ? maxes[i] : 0u);
            }
            const int e = scale_for(warp_max(window_bits));
            if (e != no_scale && col_scale != no_scale) {
                const float s = scalbnf(1.0f, e);
                float acc[tc_tiles][4] = {};
                const float *const a = ring + 16 * warp + g;
                f16_slide(acc, col_frags, jc, [&](int h, HalfBlock &b) {
                    int r = first + 8 * h;
                    r = r >= l.ring_rows ? r - l.ring_rows : r;
                    const float *q = a + (r + 2 * t) * rp;
                    split_pair(q[0] * s, q[rp] * s, b.hi[0], b.mid[0]);
                    split_pair(q[8] * s, q[rp + 8] * s, b.hi[1], b.mid[1]);
                });
                unscale(acc, col_scale, e);
                store_column_tiles<O>(p, acc, d, rows, x0, y0);
            } else {
                exact_column_sums<O>(p, col_taps, ring, first, d, rows, x0, y0);
            }
        }
    }
}

template <typename O, int TW, int stages>
cudaError_t launch_f16_kernel(SlidingArgs<float, float> &p, cudaStream_t stream) {
    return launch_planned<separable_f16_kernel<O, TW, stages>, TW>(p, 2 * TW, stream);
}

template <typename O, int TW>
cudaError_t launch_f16_tile(SlidingArgs<float, float> &p, int stages, cudaStream_t stream) {
    return stages == 2 ? launch_f16_kernel<O, TW, 2>(p, stream) : launch_f16_kernel<O, TW, 1>(p, stream);
}

}  // namespace
}  // namespace halconv::rk::sep
