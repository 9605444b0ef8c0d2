// The separable correlation on CUDA cores at memory speed (the `sliding` variant of the
// separable algorithm; the plan in separable_sliding.h):
//   output(x, y) = sum_j col(j) sum_i row(i) padded(x + i - offset_x, y + j - offset_y)
// with padded the image extended by the boundary rule, applied here as samples are staged
// (no extended copy of the image). A hand-written extern stage because Halide's
// schedules cannot keep a sliding window in registers across a reduction of run-time
// length, nor overlap the next rows' copy with the current rows' sums: its GPU separable
// schedules load every tap's sample from shared memory (bench/results/h100/core-f32-4096.csv:
// 0.63 ms for K = 31 at 4096^2 against a 0.045 ms memory floor).
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "bands/band_slab.h"
#include "common/async_copy.cuh"
#include "common/extern_call.cuh"
#include "separable/halconv_sep.h"
#include "separable/separable_sliding.h"
#include "separable/sliding_window.h"

namespace halconv::rk::sep {
namespace {

constexpr int T = sliding_outputs_per_thread;
constexpr int threads = sliding_threads;
constexpr int warps = threads / 32;

template <typename S, typename A>
struct SlidingArgs {
    const S *image;
    int64_t image_stride;
    int image_width, image_height;
    void *out;  // the output type's
    int64_t out_stride;
    int out_width, out_height;
    const S *row_taps, *col_taps;  // as stored, flipped here when flip
    int kw, kh;
    bool accumulate;  // add the sums to the output (a low-rank kernel's later terms)
    bool flip;
    int boundary;            // halconv::Boundary
    S fill;                  // the constant boundary's value in the storage type
    int64_t base_x, base_y;  // image column / row of output (0, 0)'s first tap
    int band_rows;           // output rows per block, a multiple of the chunk
    SlidingLayout layout;
};

// A float32 sum as the output type (extern_call.cuh's to_output), added to what the
// output holds when `accumulate`; float64 sums as they are.
template <typename O>
__device__ inline void store_output(O *o, float v, bool accumulate) {
    *o = to_output<O>(accumulate ? to_accumulator(*o) + v : v);
}
__device__ inline void store_output(double *o, double v, bool accumulate) {
    *o = accumulate ? *o + v : v;
}

// Eight consecutive elements of shared memory (16-byte aligned) into accumulators, as
// 16-byte loads.
__device__ inline void load8(const float *p, float (&w)[T]) {
    const float4 a = reinterpret_cast<const float4 *>(p)[0], b = reinterpret_cast<const float4 *>(p)[1];
    w[0] = a.x, w[1] = a.y, w[2] = a.z, w[3] = a.w, w[4] = b.x, w[5] = b.y, w[6] = b.z, w[7] = b.w;
}
__device__ inline void load8(const double *p, double (&w)[T]) {
#pragma unroll
    for (int m = 0; m < T / 2; m++) {
        const double2 v = reinterpret_cast<const double2 *>(p)[m];
        w[2 * m] = v.x, w[2 * m + 1] = v.y;
    }
}
__device__ inline void load8(const __half *p, float (&w)[T]) {
    const uint4 v = *reinterpret_cast<const uint4 *>(p);
    const uint32_t words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int m = 0; m < 4; m++) {
        const float2 f = __half22float2(*reinterpret_cast<const __half2 *>(&words[m]));
        w[2 * m] = f.x, w[2 * m + 1] = f.y;
    }
}

// slide()'s tap loader: taps i .. i + 7 from `taps` in shared memory (16-byte aligned), as
// 16-byte loads.
template <typename A>
__device__ inline auto taps_at(const A *taps) {
    return [taps](int i, A(&w)[T]) { load8(taps + i, w); };
}

// Queues the copy of a chunk's rows (image rows from first_row, stage_width columns from
// image column x0, the boundary rule applied) into a stage buffer: cp.async for 4- and
// 8-byte samples (the copy runs while the block sums the chunk before), plain loads for
// 2-byte ones (cp.async moves 4 bytes at least). Warp w of Warps takes rows w, w + Warps,
// ..., its lanes consecutive columns, in runs of 32; rows of up to unrolled_runs runs
// without a loop (kernels up to 128 taps wide on 128-column strips, 192 on 64-column
// ones; the wider, such as f32's 129 or float16's 257, keep it).
constexpr int unrolled_runs = 8;
template <int Warps = warps, typename S, typename A>
__device__ void stage_chunk(const SlidingArgs<S, A> &p, S *stage, int chunk_rows, int64_t first_row, int64_t x0) {
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const int width = p.layout.stage_width;
    const bool columns_inside = x0 >= 0 && x0 + width <= p.image_width;
    const auto put = [](S *dst, const S *src) {
        if constexpr (sizeof(S) >= 4) {
            cp_async_zfill<int(sizeof(S))>(uint32_t(__cvta_generic_to_shared(dst)), src, int(sizeof(S)));
        } else {
            *dst = *src;
        }
    };
    // A row of up to unrolled_runs runs, each at a constant offset from one pair of
    // addresses (this lane's first column), predicated on the width: the counted loop's
    // trip count, steps and remainder code had cost 6 % of the pass's instructions at K = 3
    // (H200, 4096^2).
    const auto put_runs = [&](S *to, const S *from) {
#pragma unroll
        for (int i = 0; i < unrolled_runs; i++) {
            if (lane + 32 * i < width) {
                put(to + 32 * i, from + 32 * i);
            }
        }
    };
    if (columns_inside && width <= 32 * unrolled_runs && first_row >= 0 && first_row + chunk_rows <= p.image_height) {
        // Every row inside the image (the usual chunk): one pair of addresses a warp,
        // stepped a row at a time, instead of each row's index through the rule and its
        // address and bounds tests in 64 bits (with slide()'s cases for the last taps, 15-19 %
        // fewer instructions in the pass at K = 3 and 15; H200, 4096^2).
        const S *from = p.image + (first_row + warp) * p.image_stride + x0 + lane;
        S *to = stage + warp * p.layout.stage_pitch + lane;
        const int64_t from_step = int64_t(Warps) * p.image_stride;
        const int to_step = Warps * p.layout.stage_pitch;
#pragma unroll 1
        for (int r = warp; r < chunk_rows; r += Warps, from += from_step, to += to_step) {
            put_runs(to, from);
        }
        return;
    }
    for (int r = warp; r < chunk_rows; r += Warps) {
        S *dst = stage + r * p.layout.stage_pitch;
        const int64_t y = band_source_index(first_row + r, p.image_height, p.boundary);
        if (y < 0) {
            for (int c = lane; c < width; c += 32) {
                dst[c] = p.fill;
            }
            continue;
        }
        const S *src = p.image + y * p.image_stride;
        if (columns_inside) {
            const S *from = src + x0 + lane;
            S *to = dst + lane;
            if (width <= 32 * unrolled_runs) {
                put_runs(to, from);
            } else {
                // One pointer per lane, stepped: no 64-bit address arithmetic per sample.
                for (int c = lane; c < width; c += 32, from += 32, to += 32) {
                    put(to, from);
                }
            }
        } else {
            for (int c = lane; c < width; c += 32) {
                const int64_t x = band_source_index(x0 + c, p.image_width, p.boundary);
                if (x < 0) {
                    dst[c] = p.fill;
                } else {
                    put(dst + c, src + x);
                }
            }
        }
    }
}

// The taps into shared memory from row_taps on: the row list, then the column list
// (from row_taps + the row list rounded up to a multiple of 8), each reversed for a
// convolution and padded with zeros to a multiple of 8. Threads: the block's.
template <int Threads, typename S, typename A>
__device__ void stage_taps(const SlidingArgs<S, A> &p, A *row_taps) {
    const int row_pitch = (p.kw + T - 1) / T * T;
    for (int i = threadIdx.x; i < row_pitch + (p.kh + T - 1) / T * T; i += Threads) {
        const bool row = i < row_pitch;
        const int k = row ? p.kw : p.kh, j = row ? i : i - row_pitch;
        const S *taps = row ? p.row_taps : p.col_taps;
        row_taps[i] = j < k ? to_accumulator(taps[p.flip ? k - 1 - j : j]) : A(0);
    }
}

template <typename S, typename A, typename O, int TW>
__global__ void __launch_bounds__(threads, sizeof(A) == 8 ? 2 : 5) separable_sliding_kernel(const SlidingArgs<S, A> p) {
    constexpr int CH = sliding_chunk_outputs / TW;
    static_assert(CH % T == 0 && CH >= 8, "a quarter warp of the row pass reads 8 distinct rows");
    extern __shared__ __align__(128) unsigned char smem[];
    const SlidingLayout &l = p.layout;
    const int taps_row_pitch = (p.kw + T - 1) / T * T;
    A *const row_taps = reinterpret_cast<A *>(smem);
    A *const col_taps = row_taps + taps_row_pitch;
    A *const ring = reinterpret_cast<A *>(smem + l.taps_bytes);
    S *const stage = reinterpret_cast<S *>(smem + l.taps_bytes + l.ring_bytes);

    const int64_t x0 = int64_t(blockIdx.x) * TW;  // the strip's first output column
    const int64_t y0 = int64_t(blockIdx.y) * p.band_rows;
    const int64_t stage_x = p.base_x + x0;  // the image column of the stage's first column
    const int rows = p.out_height - y0 < p.band_rows ? int(p.out_height - y0) : p.band_rows;
    const int chunks = (rows + CH - 1) / CH + l.lag;
    const int ring_chunks = l.lag + 1;

    stage_chunk(p, stage, CH, p.base_y + y0, stage_x);
    cp_async_commit();
    stage_taps<threads>(p, row_taps);

    // Chunk c's ring slot, c % ring_chunks, stepped: two divisions by a run-time count per
    // chunk had cost 5-8 % of the pass at K <= 31 on the H100. Output chunk c - lag's slot
    // is the one after it.
    int slot = 0;
    for (int c = 0; c < chunks; c++) {
        const int next_slot = slot + 1 == ring_chunks ? 0 : slot + 1;
        cp_async_wait<0>();
        __syncthreads();  // chunk c is staged; the ring slot written below has been read
        {
            // Row pass: a thread per 8 columns of a staged row; a quarter warp reads 8 rows.
            const int row = threadIdx.x % CH, group = threadIdx.x / CH;
            const S *src = stage + row * l.stage_pitch + group * T;
            A acc[T] = {};
            slide(acc, p.kw, taps_at(row_taps), [src](int b, A(&w)[T]) { load8(src + b * T, w); });
            // The ring by columns: the 8 sums go to 8 columns' runs.
            A *to = ring + group * T * l.ring_pitch + slot * CH + row;
#pragma unroll
            for (int m = 0; m < T; m++, to += l.ring_pitch) {
                *to = acc[m];
            }
        }
        __syncthreads();  // the chunk's row sums are in the ring; the stage has been read
        if (c + 1 < chunks) {
            stage_chunk(p, stage, CH, p.base_y + y0 + int64_t(c + 1) * CH, stage_x);
            cp_async_commit();
        }
        if (c >= l.lag) {
            // Column pass: output chunk d, a thread per 8 rows of a column. The ring wraps
            // only between blocks of 8 rows (its length is a multiple of the chunk).
            const int d = c - l.lag;
            const int column = threadIdx.x % TW, group = threadIdx.x / TW;
            const int first = next_slot * CH + group * T;  // ring row of the window's sample 0
            const A *const column_base = ring + column * l.ring_pitch;
            const int ring_rows = l.ring_rows;
            A acc[T] = {};
            slide(acc, p.kh, taps_at(col_taps), [&](int b, A(&w)[T]) {
                int r = first + b * T;
                r = r >= ring_rows ? r - ring_rows : r;
                load8(column_base + r, w);
            });
            const int64_t x = x0 + column;
            if (x < p.out_width) {
                const int first_row = d * CH + group * T;
                O *out = static_cast<O *>(p.out) + (y0 + first_row) * p.out_stride + x;
                const int n = rows - first_row;
                if (n >= T && !p.accumulate) {  // the usual case, without a test per row
#pragma unroll
                    for (int t = 0; t < T; t++, out += p.out_stride) {
                        store_output(out, acc[t], false);
                    }
                } else {
#pragma unroll
                    for (int t = 0; t < T; t++, out += p.out_stride) {
                        if (t < n) {
                            store_output(out, acc[t], p.accumulate);
                        }
                    }
                }
            }
        }
        slot = next_slot;
    }
}

// The split of p's output (on p.layout) for Kernel, block_threads a block: its band
// count and modeled cost (sliding_split) for the blocks its shared memory and registers
// let reside.
template <auto Kernel, int TW, typename S, typename A>
cudaError_t plan_split(const SlidingArgs<S, A> &p, int block_threads, SlidingSplit *split) {
    cudaError_t e = allow_opt_in_shared_memory<Kernel>();  // once per device, not per call
    int per_sm = 0;
    if (e == cudaSuccess) {
        e = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, Kernel, block_threads, p.layout.total_bytes);
    }
    if (e == cudaSuccess && per_sm < 1) {
        e = cudaErrorInvalidConfiguration;
    }
    if (e != cudaSuccess) {
        return e;
    }
    const int64_t strips = (int64_t(p.out_width) + TW - 1) / TW;
    *split = sliding_split(strips, p.out_height, p.layout, p.kw, p.kh, per_sm, device_sm_count());
    return cudaSuccess;
}

// The grid of strips of TW columns and `bands` bands each (p.band_rows set here).
template <int TW, typename S, typename A>
dim3 grid_of(SlidingArgs<S, A> &p, int bands) {
    const int ch = p.layout.chunk_rows;
    p.band_rows = int(((int64_t(p.out_height) + bands - 1) / bands + ch - 1) / ch * ch);
    const int64_t strips = (int64_t(p.out_width) + TW - 1) / TW;
    return dim3(unsigned(strips), unsigned((int64_t(p.out_height) + p.band_rows - 1) / p.band_rows));
}

// The grid for Kernel over p on p.layout (p.band_rows set here).
template <auto Kernel, int TW, typename S, typename A>
cudaError_t plan_grid(SlidingArgs<S, A> &p, int block_threads, dim3 *grid) {
    SlidingSplit split;
    if (const cudaError_t e = plan_split<Kernel, TW>(p, block_threads, &split); e != cudaSuccess) {
        return e;
    }
    *grid = grid_of<TW>(p, split.bands);
    return cudaSuccess;
}

// p on a TW-column strip where its layout fits the budget, kept in *best (its grid in
// *grid) when the model predicts it faster than the width kept before (ties keep the
// wider, considered first).
template <typename S, typename A, typename O, int TW>
cudaError_t consider_width(SlidingArgs<S, A> p, SlidingArgs<S, A> *best, double *best_cost, dim3 *grid) {
    p.layout = sliding_layout_for(TW, p.kw, p.kh, sizeof(S));
    if (p.layout.total_bytes > sliding_shared_budget) {
        return cudaSuccess;
    }
    SlidingSplit split;
    if (const cudaError_t e = plan_split<separable_sliding_kernel<S, A, O, TW>, TW>(p, threads, &split);
        e != cudaSuccess) {
        return e;
    }
    if (best->layout.tile_columns == 0 || split.cost < *best_cost) {
        *grid = grid_of<TW>(p, split.bands);
        *best = p;
        *best_cost = split.cost;
    }
    return cudaSuccess;
}

// The strip width whose split the model predicts fastest among those whose layout fits,
// and its grid (p.layout and p.band_rows set here; tile_columns 0 where none fits).
template <typename S, typename A, typename O>
cudaError_t plan(SlidingArgs<S, A> &p, dim3 *grid) {
    static_assert(sliding_tile_widths[0] == 128 && sliding_tile_widths[1] == 64, "one kernel per strip width");
    SlidingArgs<S, A> best = p;
    best.layout.tile_columns = 0;
    double cost = 0;
    cudaError_t e = consider_width<S, A, O, 128>(p, &best, &cost, grid);
    if (e == cudaSuccess) {
        e = consider_width<S, A, O, 64>(p, &best, &cost, grid);
    }
    p = best;
    return e;
}

// Launches the pass as planned (p.layout, p.band_rows and grid from plan) on `stream`.
template <typename S, typename A, typename O>
cudaError_t launch_planned_pass(const SlidingArgs<S, A> &p, dim3 grid, cudaStream_t stream) {
    if (p.layout.tile_columns == 128) {
        separable_sliding_kernel<S, A, O, 128><<<grid, threads, p.layout.total_bytes, stream>>>(p);
    } else {
        separable_sliding_kernel<S, A, O, 64><<<grid, threads, p.layout.total_bytes, stream>>>(p);
    }
    return cudaGetLastError();
}

template <typename S, typename A, typename O>
int run(halide_buffer_t *in, halide_buffer_t *row, halide_buffer_t *col, int32_t boundary, double fill,
        int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out, const char *name) {
    if (out->is_bounds_query()) {
        return 0;  // the whole image (as given) and both kernels: the boundary rule is applied here
    }
    void *const uc = nullptr;
    if (in->dim[0].stride != 1 || out->dim[0].stride != 1 || row->dim[0].stride != 1 || col->dim[0].stride != 1) {
        return fail(uc, name, "buffers must be dense along x (dim 0 stride 1)");
    }
    const int kw = row->dim[0].extent, kh = col->dim[0].extent;
    // A low-rank kernel's factors: (tap, term) buffers, the terms' sums added up.
    const int terms = row->dimensions == 2 ? row->dim[1].extent : 1;
    const int col_terms = col->dimensions == 2 ? col->dim[1].extent : 1;
    if (row->dimensions != col->dimensions || terms != col_terms || terms < 1) {
        return fail(uc, name, "row and column factors must hold the same number of terms");
    }
    SlidingArgs<S, A> p{};
    static_assert(sizeof(A) == size_t(sliding_accumulator_bytes(int(sizeof(S)))), "the layout's sums");
    if (!sliding_fits(kw, kh, sizeof(S))) {
        return fail(uc, name,
                    "kernel too large for the sliding separable pass (registry limit separable_sliding_fits)");
    }
    const int out_w = out->dim[0].extent, out_h = out->dim[1].extent;
    if (out_w <= 0 || out_h <= 0) {
        return 0;
    }
    cudaStream_t stream = nullptr;
    if (int e = inputs_to_device(uc, {in, row, col}, out, &stream); e != 0) {
        return e;
    }
    p.image = reinterpret_cast<const S *>(uintptr_t(in->device));
    p.image_stride = in->dim[1].stride;
    p.image_width = in->dim[0].extent;
    p.image_height = in->dim[1].extent;
    p.out = reinterpret_cast<void *>(uintptr_t(out->device));
    p.out_stride = out->dim[1].stride;
    p.out_width = out_w;
    p.out_height = out_h;
    p.kw = kw;
    p.kh = kh;
    p.flip = flip;
    p.boundary = boundary;
    p.fill = to_storage<S>(fill);
    p.base_x = int64_t(out->dim[0].min) - offset_x - in->dim[0].min;
    p.base_y = int64_t(out->dim[1].min) - offset_y - in->dim[1].min;
    // One pass per term, all on one plan (the terms share the kernel's shape), in stream
    // order, each after the first adding into the output: the output's own thread reads
    // back what it wrote.
    dim3 grid;
    cudaError_t e = plan<S, A, O>(p, &grid);
    for (int t = 0; t < terms && e == cudaSuccess; t++) {
        const int64_t row_at = terms > 1 ? int64_t(t) * row->dim[1].stride : 0;
        const int64_t col_at = terms > 1 ? int64_t(t) * col->dim[1].stride : 0;
        p.row_taps = reinterpret_cast<const S *>(uintptr_t(row->device)) + row_at;
        p.col_taps = reinterpret_cast<const S *>(uintptr_t(col->device)) + col_at;
        p.accumulate = t > 0;
        e = launch_planned_pass<S, A, O>(p, grid, stream);
    }
    return finish_extern_call(uc, name, "separable sliding pass", e, out);
}

}  // namespace
}  // namespace halconv::rk::sep

using halconv::rk::sep::run;

extern "C" {

int halconv_sep_sliding_f64(halide_buffer_t *in, halide_buffer_t *row, halide_buffer_t *col, int32_t boundary,
                            double fill, int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out) {
    return run<double, double, double>(in, row, col, boundary, fill, offset_x, offset_y, flip, out,
                                       "halconv_sep_sliding_f64");
}
int halconv_sep_sliding_f32(halide_buffer_t *in, halide_buffer_t *row, halide_buffer_t *col, int32_t boundary,
                            double fill, int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out) {
    return run<float, float, float>(in, row, col, boundary, fill, offset_x, offset_y, flip, out,
                                    "halconv_sep_sliding_f32");
}
int halconv_sep_sliding_f16(halide_buffer_t *in, halide_buffer_t *row, halide_buffer_t *col, int32_t boundary,
                            double fill, int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out) {
    return run<__half, float, __half>(in, row, col, boundary, fill, offset_x, offset_y, flip, out,
                                      "halconv_sep_sliding_f16");
}
int halconv_sep_sliding_f16f32(halide_buffer_t *in, halide_buffer_t *row, halide_buffer_t *col, int32_t boundary,
                               double fill, int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out) {
    return run<__half, float, float>(in, row, col, boundary, fill, offset_x, offset_y, flip, out,
                                     "halconv_sep_sliding_f16f32");
}

}  // extern "C"
