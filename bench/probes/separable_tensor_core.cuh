// An experiment kept as a probe (bench/probes/separable_sliding_probe.cu includes it):
// the float32 separable pass of separable_sliding.cu with its multiply-adds on tensor cores
// (3xTF32 mma.sync m16n8k8), measured against the CUDA-core pass and not adopted. On an
// H100 (bench/results/h100/separable/tensor-core-2026-11-27/RUN.md) it matched the
// CUDA-core pass at K = 63 (0.208 vs 0.215 ms at 4096^2) and lost at every other K
// (0.155 vs 0.111 at K = 21, 0.531 vs 0.399 at K = 127), the tensor pipe 34 % busy: three
// TF32 products of k + 7 multiply-adds each against k FMAs leave mma.sync's TF32 rate
// (about 4x the FP32 FMA rate) little to gain. A tensor-core pass worth having needs
// Hopper's wgmma or float16 parts (twice the rate), which this does not try.
//
// Each pass is a sum of 16 x 8 x 8 products of 16 lines of samples (image rows in the row
// pass, ring columns in the column pass) by 8 x 8 Toeplitz blocks of the taps,
// B_j(k, n) = tap(8 j + k - n), so 8 outputs along a line take ceil((k + 7) / 8) blocks.
// float32 operands are carried as two TF32 parts each (hi.hi + hi.lo + lo.hi). A block
// owns a strip of tile_columns and walks chunks of 32 rows as the CUDA-core pass does,
// with 2 * tile_columns threads: in the row pass warp w sums rows 16 (w % 2) .. + 15 for
// columns 32 (w / 2) .. + 31, in the column pass columns 16 w .. + 15 for the chunk's 32
// rows; both slide a window of four 8-sample blocks through registers. A non-finite sum
// (a non-finite sample met a padding tap, 0 * inf) makes the warp redo its outputs with
// the CUDA-core sums. Seen on the H100 with this kernel in the library's tests: an
// infinite sample was caught that way, a NaN was not (the outputs of its window came out
// finite), so a kernel built on this would have to test its samples, not its sums.
#pragma once

#include <algorithm>
#include <initializer_list>

namespace halconv::rk::sep {
namespace {

// A strip layout (the ring and stage of SlidingLayout) with `stages` stage buffers (2: the
// next chunk's copy overlaps this chunk's sums; 1: it overlaps the column pass only).
struct TcLayout : SlidingLayout {
    int stages = 0;
};

inline constexpr int tensor_core_chunk_rows = 32;
inline constexpr int tensor_core_min_taps = 40;  // kw + kh
// Resident warps an SM's registers allow (up to 128 a thread): more shared memory for
// more blocks gains nothing beyond.
inline constexpr int tensor_core_max_warps_per_sm = 16;
// Bytes of one pre-split Toeplitz block's fragments: per lane {hi b0, hi b1, lo b0, lo b1}.
inline constexpr size_t tensor_core_block_bytes = 32 * 16;

// Toeplitz blocks per tap list: ceil((k + 7) / 8).
__host__ __device__ constexpr int64_t tensor_core_blocks(int64_t k) {
    return (k + 14) / 8;
}

// The layout of a strip of tile_columns with `stages` stage buffers (2: the next chunk's
// copy overlaps this chunk's sums; 1: it overlaps the column pass only).
inline TcLayout tensor_core_layout_for(int tile_columns, int stages, int64_t kw, int64_t kh) {
    TcLayout l;
    if (kw < 1 || kh < 1 || kw > (int64_t(1) << 20) || kh > (int64_t(1) << 20)) {
        l.total_bytes = SIZE_MAX;
        return l;
    }
    const int64_t chunk = tensor_core_chunk_rows;
    const int64_t jr = tensor_core_blocks(kw), jc = tensor_core_blocks(kh);
    // The column pass's window reads ring rows up to 24 + 8 jc from its chunk's first (its
    // last tile starts 24 rows in), the exact fallback (slide) up to a block beyond.
    const int64_t reach = 24 + 8 * jc + 8;
    l.tile_columns = tile_columns;
    l.chunk_rows = int(chunk);
    l.stages = stages;
    l.lag = int((reach - 1) / chunk);
    l.ring_rows = int((l.lag + 1) * chunk);
    // Ring rows an odd multiple of 32 bytes apart: the column pass's fragment loads (lane
    // (g, t) reads row t, column g) and the row pass's float2 stores (row g, columns 2t,
    // a half warp at a time) hit distinct banks.
    l.ring_pitch = int(((tile_columns + 7) / 8 | 1) * 8);
    l.stage_width = int(tile_columns + 8 * jr);
    l.stage_pitch = int(sliding_pitch(l.stage_width, 4));
    const auto aligned = [](size_t b) { return (b + 127) / 128 * 128; };
    l.taps_bytes = aligned(size_t((kw + 7) / 8 * 8 + (kh + 7) / 8 * 8) * 4) + size_t(jr + jc) * tensor_core_block_bytes;
    l.ring_bytes = aligned(size_t(l.ring_rows) * size_t(l.ring_pitch) * 4);
    l.stage_bytes = aligned(size_t(chunk) * size_t(l.stage_pitch) * 4);
    l.total_bytes = l.taps_bytes + l.ring_bytes + size_t(stages) * l.stage_bytes;
    return l;
}

// Blocks resident per SM with shared_per_sm bytes (each block also costs the 1 KiB the
// runtime reserves).
inline int tensor_core_blocks_per_sm(const TcLayout &l, size_t shared_per_sm) {
    return int(shared_per_sm / (l.total_bytes + 1024));
}

// The candidate layout_for(tile, stages, kw, kh) with the most resident warps (2 x tile
// threads a block, up to what registers allow); among equals the one with more blocks (a
// block waiting at a barrier leaves the SM to the others) where more_blocks, else the
// first (two stages and the wider strip first). tile_columns 0 where none fits.
template <typename LayoutFor>
TcLayout choose_tc_layout(LayoutFor &&layout_for, int64_t kw, int64_t kh, size_t shared_per_block,
                          size_t shared_per_sm, bool more_blocks) {
    TcLayout best;
    int best_warps = 0, best_blocks = 0;
    for (int stages : {2, 1}) {
        for (int tile : sliding_tile_widths) {
            const TcLayout l = layout_for(tile, stages, kw, kh);
            const int warps_per_block = tile / 16;
            const int blocks = l.total_bytes > shared_per_block
                                   ? 0
                                   : std::min(tensor_core_blocks_per_sm(l, shared_per_sm),
                                              tensor_core_max_warps_per_sm / warps_per_block);
            const int warps = blocks * warps_per_block;
            if (warps > best_warps || (more_blocks && warps == best_warps && blocks > best_blocks)) {
                best = l;
                best_warps = warps;
                best_blocks = blocks;
            }
        }
    }
    return best;
}

// The tensor-core layout for a float32 kernel long enough to gain from it, on a device
// giving a block up to shared_per_block bytes and an SM shared_per_sm; tile_columns 0
// where the CUDA-core pass runs (another precision, a short kernel, or none fits).
inline TcLayout tensor_core_layout(int64_t kw, int64_t kh, int storage_bytes, size_t shared_per_block,
                                   size_t shared_per_sm) {
    if (storage_bytes != 4 || kw + kh < tensor_core_min_taps) {
        return TcLayout{};
    }
    return choose_tc_layout(tensor_core_layout_for, kw, kh, shared_per_block, shared_per_sm, true);
}

// d = A B + c with A 16x8 and B 8x8 in TF32 (32-bit registers whose low 13 bits the
// tensor core ignores), d and c in f32. Per lane (g, t) as above:
//   A (16x8, row-major): a[0] = A(g, t), a[1] = A(g+8, t), a[2] = A(g, t+4), a[3] = A(g+8, t+4)
//   B (8x8, col-major):  b0 = B(t, g), b1 = B(t+4, g)
//   C, d (16x8, f32):    [0..1] = (g, 2t..2t+1), [2..3] = (g+8, 2t..2t+1)
__device__ inline void mma_m16n8k8_tf32(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1,
                                        const float (&c)[4]) {
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
        "{%10, %11, %12, %13};\n"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
}

// The TF32 value nearest a float32 (ties away from zero), as its bits: adding half of the
// 13 dropped bits' unit to the magnitude bits carries into the kept ones. Values that
// round past the largest float become infinite (the callers treat that as non-finite).
__device__ inline uint32_t tf32_nearest(float v) {
    return (__float_as_uint(v) + 0x1000u) & 0xffffe000u;
}

constexpr int tc_tiles = 4;  // 8-output tiles along its lines a warp's window covers

// A 16 x 8 block of a warp's lines as TF32 parts, in the A fragment's order.
struct SplitBlock {
    uint32_t hi[4], lo[4];
};

__device__ inline void split_block(SplitBlock &b, float v0, float v1, float v2, float v3) {
    const float v[4] = {v0, v1, v2, v3};
#pragma unroll
    for (int m = 0; m < 4; m++) {
        b.hi[m] = tf32_nearest(v[m]);
        b.lo[m] = tf32_nearest(v[m] - __uint_as_float(b.hi[m]));
    }
}

// Step j of toeplitz_slide with S = j % 4: tile n takes block j + n, held in
// win[(S + n) % 4]; block j (win[S]) is then replaced by block j + 4. The hi.hi products
// chain in acc (the mma's truncation costs each step at most 2 u of the sum), the lo.hi
// and hi.lo ones in small, 2^-11 of it.
template <int S, typename Load>
__device__ __forceinline__ void toeplitz_step(float (&acc)[tc_tiles][4], float (&small)[tc_tiles][4],
                                              SplitBlock (&win)[tc_tiles], const float4 *frags, int j, int blocks,
                                              Load &load) {
    const float4 f = frags[j * 32 + (threadIdx.x & 31)];
    const uint32_t bh0 = __float_as_uint(f.x), bh1 = __float_as_uint(f.y);
    const uint32_t bl0 = __float_as_uint(f.z), bl1 = __float_as_uint(f.w);
#pragma unroll
    for (int n = 0; n < tc_tiles; n++) {
        const SplitBlock &a = win[(S + n) % tc_tiles];
        mma_m16n8k8_tf32(small[n], a.lo, bh0, bh1, small[n]);
        mma_m16n8k8_tf32(small[n], a.hi, bl0, bl1, small[n]);
        mma_m16n8k8_tf32(acc[n], a.hi, bh0, bh1, acc[n]);
    }
    if (j + 1 < blocks) {
        load(j + tc_tiles, win[S]);
    }
}

// acc[n] = sum_{j < blocks} A(block n + j) B_j for the warp's four tiles n: load(b, s)
// splits block b of the warp's lines (8 samples along them from the run's start) into s,
// frags holds the Toeplitz blocks B_j pre-split. The window of four blocks slides one
// block a step, each block loaded and split once; four steps at a time, so that the
// window rotates through register names instead of moving.
template <typename Load>
__device__ __forceinline__ void toeplitz_slide(float (&acc)[tc_tiles][4], const float4 *frags, int blocks,
                                               Load &&load) {
    static_assert(tc_tiles == 4, "four steps per round");
    SplitBlock win[tc_tiles];
#pragma unroll
    for (int n = 0; n < tc_tiles; n++) {
        load(n, win[n]);
    }
    float small[tc_tiles][4] = {};
    int j = 0;
    for (; j + tc_tiles <= blocks; j += tc_tiles) {
        toeplitz_step<0>(acc, small, win, frags, j, blocks, load);
        toeplitz_step<1>(acc, small, win, frags, j + 1, blocks, load);
        toeplitz_step<2>(acc, small, win, frags, j + 2, blocks, load);
        toeplitz_step<3>(acc, small, win, frags, j + 3, blocks, load);
    }
    if (j < blocks) {
        toeplitz_step<0>(acc, small, win, frags, j, blocks, load);
    }
    if (j + 1 < blocks) {
        toeplitz_step<1>(acc, small, win, frags, j + 1, blocks, load);
    }
    if (j + 2 < blocks) {
        toeplitz_step<2>(acc, small, win, frags, j + 2, blocks, load);
    }
#pragma unroll
    for (int n = 0; n < tc_tiles; n++) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            acc[n][i] += small[n][i];
        }
    }
}

// Whether any of the warp's sums is not finite (a sum of them overflows as well: the
// exact redo then gives the same result).
__device__ inline bool warp_sums_not_finite(const float (&acc)[tc_tiles][4]) {
    float s = 0.0f;
#pragma unroll
    for (int n = 0; n < tc_tiles; n++) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            s += acc[n][i];
        }
    }
    return __any_sync(0xffffffffu, !(fabsf(s) <= 3.402823466e38f));
}

// The Toeplitz blocks of `taps` (k of them, reversed when flip) split into TF32 parts in
// the B fragment's order: lane (g, t) of block j holds B_j(t, g) and B_j(t + 4, g), with
// B_j(r, n) = tap(8 j + r - n) and 0 outside the list.
template <int Threads>
__device__ void stage_fragments(float4 *frags, const float *taps, int k, bool flip) {
    const int blocks = int(tensor_core_blocks(k));
    for (int e = threadIdx.x; e < blocks * 32; e += Threads) {
        const int j = e / 32, lane = e % 32, g = lane >> 2, t = lane & 3;
        float b[2];
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int i = 8 * j + t + 4 * h - g;
            b[h] = i >= 0 && i < k ? taps[flip ? k - 1 - i : i] : 0.0f;
        }
        const uint32_t h0 = tf32_nearest(b[0]), h1 = tf32_nearest(b[1]);
        frags[e] = make_float4(__uint_as_float(h0), __uint_as_float(h1),
                               __uint_as_float(tf32_nearest(b[0] - __uint_as_float(h0))),
                               __uint_as_float(tf32_nearest(b[1] - __uint_as_float(h1))));
    }
}

// The magnitude bits of a float: compared as unsigned, NaN > infinity > every finite value.
__device__ inline uint32_t magnitude_bits(float v) {
    return __float_as_uint(v) & 0x7fffffffu;
}

// A warp's row-pass tiles (rows 16 rg + g and + 8, columns 32 cr + 8 n + 2t and + 1) into
// the ring's rows of the chunk.
__device__ inline void store_row_tiles(const float (&acc)[tc_tiles][4], float *ring_rows, int rp, int rg, int cr) {
    const int lane = threadIdx.x & 31, g = lane >> 2, t = lane & 3;
#pragma unroll
    for (int n = 0; n < tc_tiles; n++) {
        float *o = ring_rows + (16 * rg + g) * rp + 32 * cr + 8 * n + 2 * t;
        *reinterpret_cast<float2 *>(o) = make_float2(acc[n][0], acc[n][1]);
        *reinterpret_cast<float2 *>(o + 8 * rp) = make_float2(acc[n][2], acc[n][3]);
    }
}

// A warp's column-pass tiles (columns 16 warp + g and + 8, rows d CH + 8 n + 2t and + 1 of
// the band) into the output, inside it.
template <typename O>
__device__ inline void store_column_tiles(const SlidingArgs<float, float> &p, const float (&acc)[tc_tiles][4], int d,
                                          int rows, int64_t x0, int64_t y0) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    O *const out = static_cast<O *>(p.out);
#pragma unroll
    for (int n = 0; n < tc_tiles; n++) {
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int row = d * tensor_core_chunk_rows + 8 * n + 2 * t + (i & 1);
            const int64_t x = x0 + 16 * warp + g + 8 * (i >> 1);
            if (row < rows && x < p.out_width) {
                store_output(out + (y0 + row) * p.out_stride + x, acc[n][i], p.accumulate);
            }
        }
    }
}

// The CUDA-core row sums of a warp's rows 16 rg .. + 15 and columns 32 cr .. + 31 (a lane
// per row, two runs of 8 columns) from the stage src into the ring's rows of the chunk,
// where the tensor cores do not take them; returns the largest magnitude written (bits).
__device__ inline uint32_t exact_row_sums(const SlidingArgs<float, float> &p, const float *row_taps, const float *src,
                                          int sp, float *ring_rows, int rp, int rg, int cr) {
    const int lane = threadIdx.x & 31;
    const int row = 16 * rg + (lane & 15);
    uint32_t bits = 0;
    for (int q = 0; q < 2; q++) {
        const int column = 32 * cr + 8 * (2 * (lane >> 4) + q);
        const float *from = src + row * sp + column;
        float exact[T] = {};
        slide(exact, p.kw, taps_at(row_taps), [from](int b, float(&w)[T]) { load8(from + b * T, w); });
#pragma unroll
        for (int m = 0; m < T; m++) {
            bits = max(bits, magnitude_bits(exact[m]));
        }
        reinterpret_cast<float4 *>(ring_rows + row * rp + column)[0] =
            make_float4(exact[0], exact[1], exact[2], exact[3]);
        reinterpret_cast<float4 *>(ring_rows + row * rp + column)[1] =
            make_float4(exact[4], exact[5], exact[6], exact[7]);
    }
    return bits;
}

// The CUDA-core column sums of output chunk d (ring row `first` its first) for the warp's
// columns 16 warp .. + 15 (a lane per column, two runs of 8 rows) into the output.
template <typename O>
__device__ inline void exact_column_sums(const SlidingArgs<float, float> &p, const float *col_taps, const float *ring,
                                         int first, int d, int rows, int64_t x0, int64_t y0) {
    const SlidingLayout &l = p.layout;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, CH = tensor_core_chunk_rows;
    const int column = 16 * warp + (lane & 15);
    const int64_t x = x0 + column;
    O *const out = static_cast<O *>(p.out);
    for (int q = 0; q < 2; q++) {
        const int run = 8 * (2 * (lane >> 4) + q);
        float exact[T] = {};
        slide(exact, p.kh, taps_at(col_taps), [&](int b, float(&w)[T]) {
            int r = first + run + b * T;
            r = r >= l.ring_rows ? r - l.ring_rows : r;
            const float *from = ring + r * l.ring_pitch + column;
#pragma unroll
            for (int m = 0; m < T; m++) {
                w[m] = from[m * l.ring_pitch];
            }
        });
        if (x < p.out_width) {
            for (int m = 0; m < T && d * CH + run + m < rows; m++) {
                store_output(out + (y0 + d * CH + run + m) * p.out_stride + x, exact[m], p.accumulate);
            }
        }
    }
}

// A probe kernel's shared memory, carved as the library's sliding kernel carves it: the
// float32 tap lists (the row list padded to a multiple of 8, then the column list) at the
// start, the ring after the layout's tap area, then `count` stage buffers.
struct StageBuffers {
    unsigned char *base;
    size_t bytes;
    int count;
    __device__ float *operator()(int c) const { return reinterpret_cast<float *>(base + (c % count) * bytes); }
};
struct ProbeSmem {
    float *row_taps, *col_taps, *ring;
    StageBuffers stage;  // stage(c): chunk c's buffer
};

__device__ inline ProbeSmem probe_smem(unsigned char *smem, const SlidingArgs<float, float> &p, int stages) {
    const SlidingLayout &l = p.layout;
    float *const row_taps = reinterpret_cast<float *>(smem);
    return {row_taps, row_taps + (p.kw + T - 1) / T * T, reinterpret_cast<float *>(smem + l.taps_bytes),
            StageBuffers{smem + l.taps_bytes + l.ring_bytes, l.stage_bytes, stages}};
}

// Launches Kernel(p, args...) with `threads` a block over the grid plan_grid gives for a
// strip of TW columns (p.band_rows set there).
template <auto Kernel, int TW, typename... Args>
cudaError_t launch_planned(SlidingArgs<float, float> &p, int threads, cudaStream_t stream, Args... args) {
    dim3 grid;
    if (const cudaError_t e = plan_grid<Kernel, TW>(p, threads, &grid); e != cudaSuccess) {
        return e;
    }
    Kernel<<<grid, threads, p.layout.total_bytes, stream>>>(p, args...);
    return cudaGetLastError();
}

// A block's strip of tile_columns and band of rows, walked as the library's sliding kernel
// walks them: chunks of the layout's chunk_rows, the column pass lag chunks behind.
struct TcBand {
    int64_t x0, y0;   // the strip's first output column, the band's first output row
    int64_t stage_x;  // the image column of the stage's first column
    int rows;         // output rows of the band
    int chunks;       // chunks walked, the lag included
    int ring_chunks;  // chunks the ring holds
};

__device__ inline TcBand tc_band(const SlidingArgs<float, float> &p, int tile_columns) {
    TcBand b;
    b.x0 = int64_t(blockIdx.x) * tile_columns;
    b.y0 = int64_t(blockIdx.y) * p.band_rows;
    b.stage_x = p.base_x + b.x0;
    b.rows = p.out_height - b.y0 < p.band_rows ? int(p.out_height - b.y0) : p.band_rows;
    b.chunks = (b.rows + p.layout.chunk_rows - 1) / p.layout.chunk_rows + p.layout.lag;
    b.ring_chunks = p.layout.lag + 1;
    return b;
}

template <typename O, int TW>
__global__ void __launch_bounds__(2 * TW, 32 * tensor_core_max_warps_per_sm / (2 * TW))
    separable_tensor_core_kernel(const SlidingArgs<float, float> p, const int stages) {
    constexpr int Threads = 2 * TW, Warps = Threads / 32, CH = tensor_core_chunk_rows;
    static_assert(Warps == TW / 16 && CH == 32, "row pass: 2 x TW / 32 runs of 16 rows; column pass: TW / 16");
    extern __shared__ __align__(128) unsigned char smem[];
    const SlidingLayout &l = p.layout;
    const auto [row_taps, col_taps, ring, stage] = probe_smem(smem, p, stages);
    float4 *const row_frags = reinterpret_cast<float4 *>(
        smem + l.taps_bytes - size_t(tensor_core_blocks(p.kw) + tensor_core_blocks(p.kh)) * tensor_core_block_bytes);
    float4 *const col_frags = row_frags + tensor_core_blocks(p.kw) * 32;

    const auto [x0, y0, stage_x, rows, chunks, ring_chunks] = tc_band(p, TW);
    const int jr = int(tensor_core_blocks(p.kw)), jc = int(tensor_core_blocks(p.kh));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t = lane & 3;
    const int sp = l.stage_pitch, rp = l.ring_pitch;

    stage_chunk<Warps>(p, stage(0), CH, p.base_y + y0, stage_x);
    cp_async_commit();
    stage_taps<Threads>(p, row_taps);
    stage_fragments<Threads>(row_frags, p.row_taps, p.kw, p.flip);
    stage_fragments<Threads>(col_frags, p.col_taps, p.kh, p.flip);

    for (int c = 0; c < chunks; c++) {
        cp_async_wait<0>();
        __syncthreads();  // chunk c is staged; the ring slot written below has been read
        if (stages == 2 && c + 1 < chunks) {
            stage_chunk<Warps>(p, stage(c + 1), CH, p.base_y + y0 + int64_t(c + 1) * CH, stage_x);
        }
        cp_async_commit();
        {
            // Row pass: rows 16 rg .. + 15 of the chunk, columns 32 cr .. + 31.
            const int rg = warp & 1, cr = warp >> 1;
            const float *const src = stage(c);
            float *const ring_rows = ring + (c % ring_chunks) * CH * rp;
            const float *const a = src + (16 * rg + g) * sp + 32 * cr + t;
            float acc[tc_tiles][4] = {};
            toeplitz_slide(acc, row_frags, jr, [&](int b, SplitBlock &s) {
                const float *q = a + 8 * b;
                split_block(s, q[0], q[8 * sp], q[4], q[8 * sp + 4]);
            });
            if (!warp_sums_not_finite(acc)) {
                store_row_tiles(acc, ring_rows, rp, rg, cr);
            } else {
                exact_row_sums(p, row_taps, src, sp, ring_rows, rp, rg, cr);
            }
        }
        __syncthreads();  // the chunk's row sums are in the ring; stage(c) has been read
        if (stages == 1 && c + 1 < chunks) {
            stage_chunk<Warps>(p, stage(c + 1), CH, p.base_y + y0 + int64_t(c + 1) * CH, stage_x);
            cp_async_commit();
        }
        if (c >= l.lag) {
            // Column pass: output chunk d, columns 16 w .. + 15, its 32 rows.
            const int d = c - l.lag;
            const int first = (d % ring_chunks) * CH;  // ring row of the chunk's first
            float acc[tc_tiles][4] = {};
            const float *const a = ring + 16 * warp + g;
            toeplitz_slide(acc, col_frags, jc, [&](int b, SplitBlock &s) {
                int r = first + 8 * b;
                r = r >= l.ring_rows ? r - l.ring_rows : r;
                const float *q = a + (r + t) * rp;
                split_block(s, q[0], q[8], q[4 * rp], q[4 * rp + 8]);
            });
            if (!warp_sums_not_finite(acc)) {
                store_column_tiles<O>(p, acc, d, rows, x0, y0);
            } else {
                exact_column_sums<O>(p, col_taps, ring, first, d, rows, x0, y0);
            }
        }
    }
}

// Launches the tensor-core kernel for p's layout (from tensor_core_layout) on `stream`.
template <typename O, int TW>
cudaError_t launch_tensor_core_tile(SlidingArgs<float, float> &p, int stages, cudaStream_t stream) {
    return launch_planned<separable_tensor_core_kernel<O, TW>, TW>(p, 2 * TW, stream, stages);
}

}  // namespace
}  // namespace halconv::rk::sep
