// Probe: the float32 separable pass with its sums on the H100's float64 tensor cores
// (mma.sync m16n8k8 .f64, sm_90). float32 samples and taps are exact in float64 and so
// are their products, so the pass needs no split of its operands (the 3xTF32 and float16
// probes beside it needed three products and a scale each); its sums are float64 and
// more accurate than the CUDA-core pass's. The H100 runs these instructions at 64-67
// TFLOPS (bench/probes/dmma_rate.cu): the same multiply-add rate as its float32 CUDA
// cores, for 1/32 of the instructions, where the CUDA-core pass is bound by issuing its
// loads and moves besides its FFMAs. Measured (bench/results/h100/separable/
// float64-tensor-cores-2026-11-27/): 5-18 % faster than the CUDA-core pass from K = 63,
// slower below; not adopted.
//
// The block, strip, ring and band walk are the CUDA-core pass's (separable_sliding.cu:
// stage_chunk, the lag), with chunks of 8 Tiles rows; only the sums differ. Each pass is a
// product with a Toeplitz block of the taps: for 8 outputs along the summed axis and a
// window of 8 samples at offset d, B[k][n] = tap[d + k - n] (0 outside the list). A warp
// takes 16 x 8 Tiles outputs of a chunk of 8 Tiles rows as Tiles 16 x 8 tiles (Tiles
// independent chains of products, each A fragment used Tiles times), tile j 8 j samples
// on, its Toeplitz block j steps behind:
//   row pass:    A = 16 staged rows x 8 columns, tiles = 8-column groups;
//   column pass: A = 16 ring columns x 8 ring rows, tiles = 8-row groups.
// The product's k index is permuted so that a lane's two A samples of a row are adjacent
// (one 8-byte load): fragment columns t and t + 4 are window samples 2t and 2t + 1. The
// ring holds the row sums column by column for the same reason.
// Zero taps meet samples outside an output's window, so an infinity or NaN there would
// make a NaN the definition does not have: a warp that loads a non-finite sample redoes
// its tiles with the CUDA-core sums (slide), which give the definition's result.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "separable_tensor_core.cuh"

namespace halconv::rk::sep {

inline constexpr int dmma_tile_columns = 128;

// Toeplitz blocks (8 window samples each) of one 8-output tile's window: ceil((k + 7) / 8).
__host__ __device__ constexpr int dmma_blocks(int64_t k) {
    return int((k + 14) / 8);
}

// Elements between rows (stage) or columns (ring) whose 8-byte fragment loads are free of
// bank conflicts: 8 mod 16 floats, so that the four rows of a half warp fall 8 banks apart.
inline int dmma_pitch(int64_t elements) {
    return int((elements + 15) / 16 * 16 + 8);
}

// Chunks of 8 tiles rows; the tap area holds the float32 lists (for the fallback) and the two
// Toeplitz tables (per block and lane two doubles); the stage is wide enough for the last
// warp's window; the ring is stored by columns (ring_pitch: elements between columns).
inline SlidingLayout dmma_layout(int64_t kw, int64_t kh, int tiles) {
    SlidingLayout l;
    if (kw < 1 || kh < 1 || kw > (int64_t(1) << 20) || kh > (int64_t(1) << 20)) {
        l.total_bytes = SIZE_MAX;
        return l;
    }
    const auto aligned = [](size_t b) { return (b + 127) / 128 * 128; };
    const int64_t chunk = 8 * tiles, lag = (kh - 1 + chunk - 1) / chunk;
    l.tile_columns = dmma_tile_columns;
    l.chunk_rows = int(chunk);
    l.lag = int(lag);
    l.ring_rows = int((lag + 1) * chunk);
    l.ring_pitch = dmma_pitch(l.ring_rows);
    // The last warp's window reads up to column 128 - 8 tiles + 8 (blocks + tiles - 1) - 1;
    // the fallback up to 120 + the list rounded up to 8 + 7.
    const int64_t window = 8 * int64_t(dmma_blocks(kw)) - 8;
    l.stage_width = int(dmma_tile_columns + (window > (kw + 7) / 8 * 8 ? window : (kw + 7) / 8 * 8));
    l.stage_pitch = dmma_pitch(l.stage_width);
    l.taps_bytes = aligned(size_t((kw + 7) / 8 * 8 + (kh + 7) / 8 * 8) * 4) +
                   size_t(dmma_blocks(kw) + dmma_blocks(kh)) * 32 * 2 * sizeof(double);
    l.ring_bytes = aligned(size_t(dmma_tile_columns) * size_t(l.ring_pitch) * 4);
    l.stage_bytes = aligned(size_t(l.chunk_rows) * size_t(l.stage_pitch) * 4);
    l.total_bytes = l.taps_bytes + l.ring_bytes + l.stage_bytes;
    return l;
}

// d += a b for the 16 x 8 x 8 float64 product: a = {A[g][t], A[g + 8][t], A[g][t + 4],
// A[g + 8][t + 4]}, b = {B[t][g], B[t + 4][g]}, d = {D[g][2t], D[g][2t + 1], D[g + 8][2t],
// D[g + 8][2t + 1]} (g = lane / 4, t = lane % 4).
__device__ __forceinline__ void dmma_16x8x8(double (&d)[4], const double (&a)[4], double2 b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
        : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
        : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b.x), "d"(b.y));
#endif
}

// A warp's Tiles tiles over its window of blocks + Tiles - 1 steps: load(t, lo, hi) gives the
// lane's samples of step t (lo: row g, hi: row g + 8; window samples 8 t + 2 t4 and the
// next as fragment columns t4 and t4 + 4), tile j takes table block t - j where that is
// one of the list's. Returns false where a loaded sample was not finite.
template <int Tiles, typename Load>
__device__ __forceinline__ bool dmma_tiles(double (&d)[Tiles][4], const double2 *table, int blocks, Load &&load) {
    const int lane = threadIdx.x & 31;
    float finite = 0.f;  // stays 0 unless a sample is infinite or NaN (x * 0)
    double2 b[Tiles] = {};
#pragma unroll Tiles
    for (int t = 0; t < blocks + Tiles - 1; t++) {
        float2 lo, hi;
        load(t, lo, hi);
        finite = fmaf(lo.x, 0.f, finite);
        finite = fmaf(lo.y, 0.f, finite);
        finite = fmaf(hi.x, 0.f, finite);
        finite = fmaf(hi.y, 0.f, finite);
        const double a[4] = {lo.x, hi.x, lo.y, hi.y};
#pragma unroll
        for (int j = Tiles - 1; j > 0; j--) {
            b[j] = b[j - 1];
        }
        b[0] = t < blocks ? table[t * 32 + lane] : make_double2(0, 0);
#pragma unroll
        for (int j = 0; j < Tiles; j++) {
            if (t >= j && t - j < blocks) {
                dmma_16x8x8(d[j], a, b[j]);
            }
        }
    }
    return __all_sync(0xffffffffu, finite == 0.f);
}

// Tiles 2: chunks of 16 rows, three blocks an SM (80 registers); Tiles 4: chunks of 32.
template <typename O, int Tiles>
__global__ void __launch_bounds__(threads, Tiles == 2 ? 3 : 2)
    separable_dmma_kernel(const SlidingArgs<float, float> p) {
    constexpr int TW = dmma_tile_columns, CH = 8 * Tiles, across = 16 / Tiles;  // across: warps along a row
    static_assert(warps == 8 && TW == 128 && (Tiles == 2 || Tiles == 4),
                  "a warp per 16 x 8 Tiles outputs of each pass");
    extern __shared__ __align__(128) unsigned char smem[];
    const SlidingLayout &l = p.layout;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, g = lane >> 2, t4 = lane & 3;
    const auto [row_taps, col_taps, ring, stages] = probe_smem(smem, p, 1);  // ring[column * ring_pitch + row]
    float *const stage = stages(0);
    const int row_blocks = dmma_blocks(p.kw), col_blocks = dmma_blocks(p.kh);
    // The tables end the tap area (after the float32 lists, 128-byte aligned).
    double2 *const row_table =
        reinterpret_cast<double2 *>(smem + l.taps_bytes - size_t(row_blocks + col_blocks) * 32 * sizeof(double2));
    double2 *const col_table = row_table + row_blocks * 32;

    const auto [x0, y0, stage_x, rows, chunks, ring_chunks] = tc_band(p, TW);

    stage_chunk(p, stage, CH, p.base_y + y0, stage_x);
    cp_async_commit();
    stage_taps<threads>(p, row_taps);
    // Toeplitz tables: block q, lane (g, t) holds tap[8 q + 2 t - g] and the next tap of
    // the list as applied (0 outside it).
    for (int i = threadIdx.x; i < (row_blocks + col_blocks) * 32; i += threads) {
        const bool row = i < row_blocks * 32;
        const int k = row ? p.kw : p.kh, j = row ? i : i - row_blocks * 32;
        const int tap = 8 * (j >> 5) + 2 * (j & 3) - ((j & 31) >> 2);
        const float *taps = row ? p.row_taps : p.col_taps;
        const auto at = [&](int i) { return i >= 0 && i < k ? double(taps[p.flip ? k - 1 - i : i]) : 0.0; };
        (row ? row_table : col_table)[j] = make_double2(at(tap), at(tap + 1));
    }
    // Ring rows past a window's last tap meet zero taps: zero them once so that no stale
    // non-finite value sends a warp to the fallback.
    for (int i = threadIdx.x; i < TW * l.ring_pitch; i += threads) {
        ring[i] = 0.f;
    }

    for (int c = 0; c < chunks; c++) {
        cp_async_wait<0>();
        __syncthreads();
        const int slot = (c % ring_chunks) * CH;  // the ring row of the chunk's row 0
        {
            // Row pass: rows 16 (warp / across) .. + 15, columns 8 Tiles (warp % across) on.
            const int row0 = 16 * (warp / across), col0 = 8 * Tiles * (warp % across);
            const float *src = stage + (row0 + g) * l.stage_pitch + col0 + 2 * t4;
            const int hi_rows = 8 * l.stage_pitch;
            double d[Tiles][4] = {};
            const bool finite = dmma_tiles(d, row_table, row_blocks, [&](int t, float2 &lo, float2 &hi) {
                lo = *reinterpret_cast<const float2 *>(src + 8 * t);
                hi = *reinterpret_cast<const float2 *>(src + 8 * t + hi_rows);
            });
            if (finite) {
                float *o = ring + (col0 + 2 * t4) * l.ring_pitch + slot + row0 + g;
#pragma unroll
                for (int j = 0; j < Tiles; j++, o += 8 * l.ring_pitch) {
                    o[0] = float(d[j][0]);
                    o[l.ring_pitch] = float(d[j][1]);
                    o[8] = float(d[j][2]);
                    o[l.ring_pitch + 8] = float(d[j][3]);
                }
            } else {
                const int row = row0 + (lane & 15);
#pragma unroll 1
                for (int h = 0; h < Tiles / 2; h++) {
                    const int col = col0 + 8 * (Tiles / 2 * (lane >> 4) + h);
                    const float *s = stage + row * l.stage_pitch + col;
                    float acc[T] = {};
                    slide(acc, p.kw, taps_at(row_taps), [s](int b, float(&w)[T]) { load8(s + b * T, w); });
                    float *o = ring + col * l.ring_pitch + slot + row;
#pragma unroll
                    for (int i = 0; i < T; i++) {
                        o[i * l.ring_pitch] = acc[i];
                    }
                }
            }
        }
        __syncthreads();
        if (c + 1 < chunks) {
            stage_chunk(p, stage, CH, p.base_y + y0 + int64_t(c + 1) * CH, stage_x);
            cp_async_commit();
        }
        if (c >= l.lag) {
            // Column pass: output chunk dc, columns 16 warp .. + 15, its 8 Tiles rows.
            const int dc = c - l.lag;
            const int first = (dc % ring_chunks) * CH;  // ring row of output row 0's first tap
            const float *column = ring + (16 * warp + g) * l.ring_pitch + 2 * t4;
            const int hi_columns = 8 * l.ring_pitch;
            double d[Tiles][4] = {};
            const bool finite = dmma_tiles(d, col_table, col_blocks, [&](int t, float2 &lo, float2 &hi) {
                int r = first + 8 * t;
                r = r >= l.ring_rows ? r - l.ring_rows : r;  // 8-row blocks never straddle the wrap
                lo = *reinterpret_cast<const float2 *>(column + r);
                hi = *reinterpret_cast<const float2 *>(column + r + hi_columns);
            });
            O *const out = static_cast<O *>(p.out);
            const int out_row0 = dc * CH;
            if (finite) {
#pragma unroll
                for (int j = 0; j < Tiles; j++) {
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        const int y = out_row0 + 8 * j + 2 * t4 + (i & 1);
                        const int64_t x = x0 + 16 * warp + g + 8 * (i >> 1);
                        if (y < rows && x < p.out_width) {
                            store_output(out + (y0 + y) * p.out_stride + x, float(d[j][i]), p.accumulate);
                        }
                    }
                }
            } else {
                const int col = 16 * warp + (lane & 15);
                const float *base = ring + col * l.ring_pitch;
#pragma unroll 1
                for (int h = 0; h < Tiles / 2; h++) {
                    const int group = Tiles / 2 * (lane >> 4) + h;
                    const int first_row = first + group * T;
                    float acc[T] = {};
                    slide(acc, p.kh, taps_at(col_taps), [&](int b, float(&w)[T]) {
                        int r = first_row + b * T;
                        r = r >= l.ring_rows ? r - l.ring_rows : r;
                        load8(base + r, w);
                    });
                    const int64_t x = x0 + col;
                    if (x < p.out_width) {
                        const int n = rows - (out_row0 + group * T);
                        O *o = out + (y0 + out_row0 + group * T) * p.out_stride + x;
#pragma unroll
                        for (int i = 0; i < T; i++, o += p.out_stride) {
                            if (i < n) {
                                store_output(o, acc[i], p.accumulate);
                            }
                        }
                    }
                }
            }
        }
    }
}

template <typename O, int Tiles>
cudaError_t launch_dmma(SlidingArgs<float, float> &p, cudaStream_t stream) {
    return launch_planned<separable_dmma_kernel<O, Tiles>, dmma_tile_columns>(p, threads, stream);
}

}  // namespace halconv::rk::sep
