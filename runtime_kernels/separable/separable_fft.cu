// The separable correlation by 1D overlap-save FFTs along lines (halconv_sep.h's fft_lines
// entries; the plan and its reasons in separable_fft.h): a setup kernel (twiddles, taps,
// limits), the taps' spectra, the row pass into the float32 intermediate, the column pass
// into the output.
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <iterator>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "bands/band_slab.h"
#include "common/extern_call.cuh"
#include "common/workspace.h"
#include "fft/fft_line.cuh"
#include "separable/halconv_sep.h"
#include "separable/separable_fft.h"

namespace halconv::rk::sep {
namespace {

using fft_line::Shape;
constexpr int row_points = fft_points(FftAxis::rows), column_points = fft_points(FftAxis::columns);
template <int M>
using RowShape = Shape<M, row_points>;
template <int M>
using ColumnShape = Shape<M, column_points>;

// Lines (row pairs) per block of the row pass: about 256 threads.
template <int M>
__host__ __device__ constexpr int row_lines() {
    constexpr int T = RowShape<M>::T;
    return T >= 256 ? 1 : 256 / T;
}
template <int M>
__host__ __device__ constexpr int row_threads() {
    return row_lines<M>() * RowShape<M>::T;
}
// Column pairs per block of the column pass: about 512 threads, 2 to 16 pairs (16 pairs:
// 128 bytes of a row per load).
template <int M>
__host__ __device__ constexpr int column_pairs() {
    constexpr int by_threads = 512 / ColumnShape<M>::T;
    return by_threads < 2 ? 2 : by_threads > 16 ? 16 : by_threads;
}
template <int M>
__host__ __device__ constexpr int column_threads() {
    return column_pairs<M>() * ColumnShape<M>::T;
}
// Points between the lines of a column-pass block in shared memory: a half-warp spans the
// C lines of its pairs.
template <int M>
__host__ __device__ constexpr int column_line_stride() {
    return fft_line::bank_spread_stride(M, column_pairs<M>());
}
template <int M>
constexpr size_t column_shared_bytes() {
    return size_t(column_pairs<M>()) * column_line_stride<M>() * sizeof(float2);
}

template <typename S>
struct SetupArgs {
    const S *row_taps, *col_taps;
    int kw, kh;
    bool flip;
    float fill;  // rounded to the storage type
    int row_length, column_length;
    float2 *twiddles;
    float *taps;  // kw row taps, then kh column taps, as correlated (reversed when flip)
    FftLinesConstants *constants;
};

// The twiddle table, the taps as float32 and (block 0, summing in float64) the constants.
constexpr int setup_threads = 256;
template <typename S>
__global__ void __launch_bounds__(setup_threads) setup(SetupArgs<S> a) {
    __shared__ double sums[3][setup_threads];
    const int t = int(threadIdx.x), i = int(blockIdx.x) * setup_threads + t;
    if (i < fft_line::kTableSize) {
        a.twiddles[i] = fft_line::table_twiddle(i);
    }
    if (i < a.kw) {
        a.taps[i] = to_accumulator(a.row_taps[a.flip ? a.kw - 1 - i : i]);
    } else if (i < a.kw + a.kh) {
        const int c = i - a.kw;
        a.taps[i] = to_accumulator(a.col_taps[a.flip ? a.kh - 1 - c : c]);
    }
    if (blockIdx.x != 0) {
        return;
    }
    double row_sum = 0, row_abs = 0, col_abs = 0;
    for (int k = t; k < a.kw; k += setup_threads) {
        const double v = to_accumulator(a.row_taps[k]);
        row_sum += v;
        row_abs += fabs(v);
    }
    for (int k = t; k < a.kh; k += setup_threads) {
        col_abs += fabs(double(to_accumulator(a.col_taps[k])));
    }
    sums[0][t] = row_sum;
    sums[1][t] = row_abs;
    sums[2][t] = col_abs;
    __syncthreads();
    for (int half = setup_threads / 2; half > 0; half /= 2) {
        if (t < half) {
            for (int q = 0; q < 3; q++) {
                sums[q][t] += sums[q][t + half];
            }
        }
        __syncthreads();
    }
    if (t == 0) {
        // A transform's largest intermediate is M max|x| max(1, sum|taps|): a quarter of
        // float32's range at most (as the fft stage's fft_transform_limit).
        a.constants->row_limit = float(double(FLT_MAX) / (4.0 * a.row_length * fmax(1.0, sums[1][0])));
        a.constants->column_limit = float(double(FLT_MAX) / (4.0 * a.column_length * fmax(1.0, sums[2][0])));
        a.constants->fill_row = float(sums[0][0] * double(a.fill));
    }
}

// spectrum[k] = conj(sum_t taps[t] exp(-2 pi i k t / M)) / M for both passes (k < M of
// each): the conjugate makes the product a correlation, 1 / M the inverse's scale. The
// exponentials from the correctly rounded table, the sums in float64, a warp per value (the
// lanes' loads of the table independent, so that their latency overlaps). Its threads also
// copy the passes' pass tables from the table (32 (M_rows + M_columns) threads: more than
// either has entries).
struct PassTableTargets {
    float2 *rows, *columns;
};
constexpr bool spectra_threads_cover_pass_tables() {
    for (int m : fft_line_lengths) {
        if (fft_line::pass_table_size(m, row_points) > 32 * m || fft_line::pass_table_size(m, column_points) > 32 * m) {
            return false;
        }
    }
    return true;
}
static_assert(spectra_threads_cover_pass_tables());
__global__ void spectra(const float *taps, int kw, int kh, const float2 *twiddles, float2 *row_spectrum, int mr,
                        float2 *column_spectrum, int mc, PassTableTargets pass_tables) {
    const int thread = int(blockIdx.x * blockDim.x + threadIdx.x);
    fft_line::fill_pass_table_entry(pass_tables.rows, twiddles, mr, row_points, thread);
    fft_line::fill_pass_table_entry(pass_tables.columns, twiddles, mc, column_points, thread);
    const int i = thread / 32, lane = int(threadIdx.x % 32);
    if (i >= mr + mc) {
        return;  // the whole warp
    }
    const bool row = i < mr;
    const int k = row ? i : i - mr, m = row ? mr : mc, n = row ? kw : kh;
    const float *t = row ? taps : taps + kw;
    const int scale = fft_line::kTableSize / m;
    double re = 0, im = 0;
    for (int j = lane; j < n; j += 32) {
        const float2 w = twiddles[((k * j) & (m - 1)) * scale];  // k j < 2^24; M a power of two
        re += double(t[j]) * w.x;
        im += double(t[j]) * w.y;
    }
    for (int offset = 16; offset > 0; offset /= 2) {
        re += __shfl_down_sync(0xffffffffu, re, offset);
        im += __shfl_down_sync(0xffffffffu, im, offset);
    }
    if (lane == 0) {
        (row ? row_spectrum : column_spectrum)[k] = make_float2(float(re / m), float(-im / m));
    }
}

template <typename S>
struct RowsArgs {
    const S *image;
    int64_t image_stride;
    int image_width, image_height;
    int64_t base_x;  // image column of output column 0's first tap
    float fill;
    int boundary;
    float *mid;
    int64_t mid_pitch;
    int out_width;
    int step;             // outputs per block: M - kw + 1
    int blocks_per_line;  // along a row
    int kw;
    const float *taps;  // as correlated
    const float2 *spectrum;
    fft_line::PassTables twiddles;  // of the M-point transform
    const FftLinesConstants *constants;
};

// Image rows 2 l and 2 l + 1 (l: the block's line group times its lines plus the thread's
// line), the block of `step` outputs along them from x0: transformed as one complex line,
// or, where a sample of the block's lines is beyond the limit (or NaN), summed directly.
template <int M, typename S>
__global__ void __launch_bounds__(row_threads<M>()) rows_pass(RowsArgs<S> p) {
    using Sh = RowShape<M>;
    __shared__ float2 shared[row_lines<M>() * Sh::stride];
    const int line = int(threadIdx.x) / Sh::T, j = int(threadIdx.x) % Sh::T;
    const int group = int(blockIdx.x) / p.blocks_per_line, block = int(blockIdx.x) % p.blocks_per_line;
    const int ya = 2 * (group * row_lines<M>() + line), yb = ya + 1;
    const bool a_in = ya < p.image_height, b_in = yb < p.image_height;
    const S *ra = p.image + int64_t(a_in ? ya : 0) * p.image_stride;
    const S *rb = p.image + int64_t(b_in ? yb : 0) * p.image_stride;
    const int x0 = block * p.step;
    const int64_t first = p.base_x + x0;  // image column of the block's sample 0
    const bool inside = first >= 0 && first + M <= p.image_width;
    const auto sample = [&](const S *r, int64_t x) {
        const int64_t sx = band_source_index(x, p.image_width, p.boundary);
        return sx < 0 ? p.fill : to_accumulator(r[sx]);
    };
    const float limit = p.constants->row_limit;
    float2 v[Sh::S];
    bool bad = false;
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        const int64_t x = first + j + Sh::T * m;
        float a = 0.0f, b = 0.0f;
        if (inside) {
            a = a_in ? to_accumulator(ra[x]) : 0.0f;
            b = b_in ? to_accumulator(rb[x]) : 0.0f;
        } else {
            a = a_in ? sample(ra, x) : 0.0f;
            b = b_in ? sample(rb, x) : 0.0f;
        }
        bad = bad || !(fabsf(a) <= limit) || !(fabsf(b) <= limit);
        v[m] = make_float2(a, b);
    }
    float *oa = p.mid + int64_t(ya) * p.mid_pitch, *ob = p.mid + int64_t(yb) * p.mid_pitch;
    if (__syncthreads_or(bad)) {  // the same for the whole block
#pragma unroll 1
        for (int m = 0; m < Sh::S; m++) {
            const int n = j + Sh::T * m, x = x0 + n;
            if (n >= p.step || x >= p.out_width) {
                continue;
            }
            float sa = 0.0f, sb = 0.0f;
            for (int t = 0; t < p.kw; t++) {
                const float w = p.taps[t];
                sa += a_in ? w * sample(ra, first + n + t) : 0.0f;
                sb += b_in ? w * sample(rb, first + n + t) : 0.0f;
            }
            if (a_in) {
                oa[x] = sa;
            }
            if (b_in) {
                ob[x] = sb;
            }
        }
        return;
    }
    const fft_line::LineBarrier<Sh::T> barrier;
    float2 *sh = shared + line * Sh::stride;
    fft_line::forward<M, Sh::S, true>(v, sh, j, p.twiddles, barrier);
    // The inverse as conj(forward(conj x)).
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        v[m] = fft_line::conj(fft_line::cmul(v[m], __ldg(&p.spectrum[j + Sh::T * m])));
    }
    fft_line::forward<M, Sh::S, true>(v, sh, j, p.twiddles, barrier);
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        const int n = j + Sh::T * m, x = x0 + n;
        if (n < p.step && x < p.out_width) {
            if (a_in) {
                oa[x] = v[m].x;
            }
            if (b_in) {
                ob[x] = -v[m].y;
            }
        }
    }
}

template <typename O>
struct ColumnsArgs {
    const float *mid;
    int64_t mid_pitch;
    int mid_height;  // the image's rows
    int64_t base_y;  // intermediate row of output row 0's first tap
    int boundary;
    O *out;
    int64_t out_stride;
    int out_width, out_height;
    bool pairs;       // out's rows allow aligned pair stores at even x
    int step;         // outputs per block: M - kh + 1
    int pair_groups;  // blocks across the output's columns
    int kh;
    const float *taps;  // as correlated
    const float2 *spectrum;
    fft_line::PassTables twiddles;  // of the M-point transform
    const FftLinesConstants *constants;
};

// Intermediate columns 2 c and 2 c + 1 (c: the block's pair group times its pairs plus the
// thread's pair) as one complex line, the block of `step` outputs down them from y0; or
// summed directly where a sample of the block's lines is beyond the limit (or NaN).
template <int M, typename O>
__global__ void __launch_bounds__(column_threads<M>()) columns_pass(ColumnsArgs<O> p) {
    using Sh = ColumnShape<M>;
    constexpr int C = column_pairs<M>();
    extern __shared__ float2 dynamic_shared[];
    const int c = int(threadIdx.x) % C, j = int(threadIdx.x) / C;
    const int block = int(blockIdx.x) / p.pair_groups, group = int(blockIdx.x) % p.pair_groups;
    const int x = 2 * (group * C + c);
    const bool in = x < p.out_width, second = x + 1 < p.out_width;
    const int y0 = block * p.step;
    const int64_t first = p.base_y + y0;  // intermediate row of the block's sample 0
    const bool inside = first >= 0 && first + M <= p.mid_height;
    const float fill_row = p.constants->fill_row;
    // Samples (x, y) and (x + 1, y) of the intermediate extended by the rule (the row pass
    // of a constant boundary's rows: fill times the row taps' sum).
    const auto pair_at = [&](int64_t y, bool mapped) {
        const int64_t sy = mapped ? y : band_source_index(y, p.mid_height, p.boundary);
        float2 s =
            sy < 0 ? make_float2(fill_row, fill_row) : *reinterpret_cast<const float2 *>(p.mid + sy * p.mid_pitch + x);
        if (!second) {
            s.y = 0.0f;  // the pitch's pad column
        }
        return s;
    };
    const float limit = p.constants->column_limit;
    float2 v[Sh::S];
    bool bad = false;
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        const float2 s = in ? pair_at(first + j + Sh::T * m, inside) : make_float2(0.0f, 0.0f);
        bad = bad || !(fabsf(s.x) <= limit) || !(fabsf(s.y) <= limit);
        v[m] = s;
    }
    if (__syncthreads_or(bad)) {  // the same for the whole block
        if (!in) {
            return;
        }
#pragma unroll 1
        for (int m = 0; m < Sh::S; m++) {
            const int n = j + Sh::T * m, y = y0 + n;
            if (n >= p.step || y >= p.out_height) {
                continue;
            }
            float sa = 0.0f, sb = 0.0f;
            for (int t = 0; t < p.kh; t++) {
                const float2 s = pair_at(first + n + t, false);
                sa += p.taps[t] * s.x;
                sb += p.taps[t] * s.y;
            }
            O *o = p.out + int64_t(y) * p.out_stride + x;
            o[0] = to_output<O>(sa);
            if (second) {
                o[1] = to_output<O>(sb);
            }
        }
        return;
    }
    float2 *sh = dynamic_shared + c * column_line_stride<M>();
    fft_line::forward<M, Sh::S, true>(v, sh, j, p.twiddles, fft_line::BlockBarrier{});
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        v[m] = fft_line::conj(fft_line::cmul(v[m], __ldg(&p.spectrum[j + Sh::T * m])));
    }
    fft_line::forward<M, Sh::S, true>(v, sh, j, p.twiddles, fft_line::BlockBarrier{});
    if (!in) {
        return;
    }
#pragma unroll
    for (int m = 0; m < Sh::S; m++) {
        const int n = j + Sh::T * m, y = y0 + n;
        if (n < p.step && y < p.out_height) {
            O *o = p.out + int64_t(y) * p.out_stride + x;
            if (second && p.pairs) {
                store_pair<O>(o, v[m].x, -v[m].y);
            } else {
                o[0] = to_output<O>(v[m].x);
                if (second) {
                    o[1] = to_output<O>(-v[m].y);
                }
            }
        }
    }
}

template <int M, typename S>
cudaError_t launch_rows(RowsArgs<S> p, int64_t out_width, cudaStream_t stream) {
    p.step = M - p.kw + 1;
    p.blocks_per_line = int((out_width + p.step - 1) / p.step);
    const int64_t groups = (int64_t(p.image_height) + 2 * row_lines<M>() - 1) / (2 * row_lines<M>());
    const int64_t blocks = groups * p.blocks_per_line;
    if (blocks > INT_MAX) {
        return cudaErrorInvalidConfiguration;
    }
    rows_pass<M, S><<<unsigned(blocks), row_threads<M>(), 0, stream>>>(p);
    return cudaGetLastError();
}

template <int M, typename O>
cudaError_t launch_columns(ColumnsArgs<O> p, cudaStream_t stream) {
    if (const cudaError_t e = allow_opt_in_shared_memory<columns_pass<M, O>>(); e != cudaSuccess) {
        return e;
    }
    p.step = M - p.kh + 1;
    p.pair_groups = int((int64_t(p.out_width) + 2 * column_pairs<M>() - 1) / (2 * column_pairs<M>()));
    const int64_t blocks = (int64_t(p.out_height) + p.step - 1) / p.step * p.pair_groups;
    if (blocks > INT_MAX) {
        return cudaErrorInvalidConfiguration;
    }
    columns_pass<M, O><<<unsigned(blocks), column_threads<M>(), column_shared_bytes<M>(), stream>>>(p);
    return cudaGetLastError();
}

// launch(std::integral_constant<int, M>{}) for the line length m: each of fft_line_lengths
// has its kernels, any other length is refused.
template <typename Launch, size_t... I>
cudaError_t for_line_length(int m, Launch &&launch, std::index_sequence<I...>) {
    cudaError_t e = cudaErrorInvalidValue;
    (void)((m == fft_line_lengths[I] && ((e = launch(std::integral_constant<int, fft_line_lengths[I]>{})), true)) ||
           ...);
    return e;
}
template <typename Launch>
cudaError_t for_line_length(int m, Launch &&launch) {
    return for_line_length(m, launch, std::make_index_sequence<std::size(fft_line_lengths)>{});
}

// Where each table lies in a block laid out as l's tables (from its tables_offset).
struct TablePointers {
    float2 *twiddles, *row_pass_tables, *column_pass_tables, *row_spectrum, *column_spectrum;
    float *taps;
    FftLinesConstants *constants;
};
TablePointers tables_at(const FftLinesLayout &l, char *tables) {
    const auto at = [&](size_t offset) { return tables + (offset - l.tables_offset); };
    return {reinterpret_cast<float2 *>(at(l.twiddles_offset)),
            reinterpret_cast<float2 *>(at(l.row_pass_tables_offset)),
            reinterpret_cast<float2 *>(at(l.column_pass_tables_offset)),
            reinterpret_cast<float2 *>(at(l.row_spectrum_offset)),
            reinterpret_cast<float2 *>(at(l.column_spectrum_offset)),
            reinterpret_cast<float *>(at(l.taps_offset)),
            reinterpret_cast<FftLinesConstants *>(at(l.constants_offset))};
}

// The tables of kw x kh taps (storage type S, on the device) into t: the setup kernel
// (twiddles, taps as float32, constants), then the spectra and the pass tables.
template <typename S>
cudaError_t make_tables(const S *row_taps, const S *col_taps, int kw, int kh, bool flip, float fill_s,
                        const FftLinesLayout &l, const TablePointers &t, cudaStream_t stream) {
    const SetupArgs<S> a{row_taps,     col_taps,        kw,         kh,     flip,       fill_s,
                         l.row_length, l.column_length, t.twiddles, t.taps, t.constants};
    const int setup_items = std::max(fft_line::kTableSize, kw + kh);
    setup<S><<<(setup_items + setup_threads - 1) / setup_threads, setup_threads, 0, stream>>>(a);
    const int values_per_block = 8;  // a warp each
    spectra<<<(l.row_length + l.column_length + values_per_block - 1) / values_per_block, 32 * values_per_block, 0,
              stream>>>(t.taps, kw, kh, t.twiddles, t.row_spectrum, l.row_length, t.column_spectrum, l.column_length,
                        {t.row_pass_tables, t.column_pass_tables});
    return cudaGetLastError();
}

template <typename S, typename O>
int run(halide_buffer_t *in, halide_buffer_t *row, halide_buffer_t *col, int32_t boundary, double fill,
        int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out, const char *name) {
    if (out->is_bounds_query()) {
        return 0;  // the whole image (as given) and both kernels: the boundary rule is applied here
    }
    void *const uc = nullptr;
    if (in->dim[0].stride != 1 || out->dim[0].stride != 1 || row->dim[0].stride != 1 || col->dim[0].stride != 1) {
        return fail(uc, name, "buffers must be dense along x (dim 0 stride 1)");
    }
    if (row->dimensions != 1 || col->dimensions != 1) {
        return fail(uc, name, "the fft_lines pass takes one row and one column kernel (a rank-1 kernel)");
    }
    const int kw = row->dim[0].extent, kh = col->dim[0].extent;
    if (kw < 1 || kh < 1 || kw > fft_max_taps || kh > fft_max_taps) {
        return fail(uc, name,
                    "kernels of 1 to " + std::to_string(fft_max_taps) +
                        " taps per axis (registry limit separable_fft_lines_fits)");
    }
    const int out_w = out->dim[0].extent, out_h = out->dim[1].extent;
    if (out_w <= 0 || out_h <= 0) {
        return 0;
    }
    cudaStream_t stream = nullptr;
    if (int e = inputs_to_device(uc, {in, row, col}, out, &stream); e != 0) {
        return e;
    }
    const int image_h = in->dim[1].extent;
    const FftLinesLayout l = fft_lines_layout(out_w, out_h, image_h, kw, kh);
    const float fill_s = float(to_storage<S>(fill));
    // A plan's tables where they are this call's; else the call's own, after the intermediate.
    const FftLinesTables *prepared = current_workspace().fft_lines;
    const bool use_prepared =
        prepared != nullptr && prepared->matches(int(sizeof(S)), kw, kh, l.row_length, l.column_length, flip, fill_s);
    Scratch scratch(stream);
    char *ws = nullptr;
    cudaError_t e = scratch.take(use_prepared ? l.tables_offset : l.total_bytes, &ws);
    TablePointers t{};
    float *mid = nullptr;
    if (e == cudaSuccess) {
        t = tables_at(l, use_prepared ? static_cast<char *>(prepared->data) : ws + l.tables_offset);
        mid = reinterpret_cast<float *>(ws + l.mid_offset);
        if (!use_prepared) {
            e = make_tables<S>(reinterpret_cast<const S *>(uintptr_t(row->device)),
                               reinterpret_cast<const S *>(uintptr_t(col->device)), kw, kh, flip, fill_s, l, t, stream);
        }
    }
    if (e == cudaSuccess) {
        RowsArgs<S> r{};
        r.image = reinterpret_cast<const S *>(uintptr_t(in->device));
        r.image_stride = in->dim[1].stride;
        r.image_width = in->dim[0].extent;
        r.image_height = image_h;
        r.base_x = int64_t(out->dim[0].min) - offset_x - in->dim[0].min;
        r.fill = fill_s;
        r.boundary = boundary;
        r.mid = mid;
        r.mid_pitch = l.mid_pitch;
        r.out_width = out_w;
        r.kw = kw;
        r.taps = t.taps;
        r.spectrum = t.row_spectrum;
        r.twiddles = {t.row_pass_tables};
        r.constants = t.constants;
        e = for_line_length(l.row_length, [&](auto m) { return launch_rows<decltype(m)::value, S>(r, out_w, stream); });
    }
    if (e == cudaSuccess) {
        ColumnsArgs<O> c{};
        c.mid = mid;
        c.mid_pitch = l.mid_pitch;
        c.mid_height = image_h;
        c.base_y = int64_t(out->dim[1].min) - offset_y - in->dim[1].min;
        c.boundary = boundary;
        c.out = reinterpret_cast<O *>(uintptr_t(out->device));
        c.out_stride = out->dim[1].stride;
        c.out_width = out_w;
        c.out_height = out_h;
        c.pairs = uintptr_t(c.out) % (2 * sizeof(O)) == 0 && c.out_stride % 2 == 0;
        c.kh = kh;
        c.taps = t.taps + kw;
        c.spectrum = t.column_spectrum;
        c.twiddles = {t.column_pass_tables};
        c.constants = t.constants;
        e = for_line_length(l.column_length, [&](auto m) { return launch_columns<decltype(m)::value, O>(c, stream); });
    }
    if (const cudaError_t r = scratch.release(); e == cudaSuccess) {
        e = r;
    }
    return finish_extern_call(uc, name, "separable fft_lines passes", e, out);
}

}  // namespace

FftLinesTables prepare_fft_lines(int storage_bytes, const void *row_taps, const void *col_taps, int kw, int kh,
                                 bool flip, double fill, int64_t out_width, int64_t out_height, void *memory,
                                 void *stream) {
    if (storage_bytes != 4 && storage_bytes != 2) {
        throw std::runtime_error("the fft_lines tables take float32 or float16 taps, not " +
                                 std::to_string(storage_bytes) + "-byte ones");
    }
    if (kw < 1 || kh < 1 || kw > fft_max_taps || kh > fft_max_taps || out_width < 1 || out_height < 1) {
        throw std::runtime_error("the fft_lines tables take kernels of 1 to " + std::to_string(fft_max_taps) +
                                 " taps per axis and a non-empty output");
    }
    // The tables' layout does not depend on the image's height (the intermediate's).
    const FftLinesLayout l = fft_lines_layout(out_width, out_height, 0, kw, kh);
    FftLinesTables t;
    t.storage_bytes = storage_bytes;
    t.kw = kw;
    t.kh = kh;
    t.row_length = l.row_length;
    t.column_length = l.column_length;
    t.flip = flip;
    t.fill = storage_bytes == 4 ? float(to_storage<float>(fill)) : float(to_storage<__half>(fill));
    t.data = memory;
    const TablePointers p = tables_at(l, static_cast<char *>(memory));
    const auto s = static_cast<cudaStream_t>(stream);
    const cudaError_t e = storage_bytes == 4
                              ? make_tables(static_cast<const float *>(row_taps), static_cast<const float *>(col_taps),
                                            kw, kh, flip, t.fill, l, p, s)
                              : make_tables(static_cast<const __half *>(row_taps),
                                            static_cast<const __half *>(col_taps), kw, kh, flip, t.fill, l, p, s);
    if (e != cudaSuccess) {
        throw std::runtime_error(std::string("preparing the fft_lines tables: ") + cudaGetErrorString(e));
    }
    return t;
}

}  // namespace halconv::rk::sep

using halconv::rk::sep::run;

extern "C" {

int halconv_sep_fft_lines_f32(halide_buffer_t *in, halide_buffer_t *row, halide_buffer_t *col, int32_t boundary,
                              double fill, int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out) {
    return run<float, float>(in, row, col, boundary, fill, offset_x, offset_y, flip, out, "halconv_sep_fft_lines_f32");
}
int halconv_sep_fft_lines_f16(halide_buffer_t *in, halide_buffer_t *row, halide_buffer_t *col, int32_t boundary,
                              double fill, int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out) {
    return run<__half, __half>(in, row, col, boundary, fill, offset_x, offset_y, flip, out,
                               "halconv_sep_fft_lines_f16");
}
int halconv_sep_fft_lines_f16f32(halide_buffer_t *in, halide_buffer_t *row, halide_buffer_t *col, int32_t boundary,
                                 double fill, int32_t offset_x, int32_t offset_y, bool flip, halide_buffer_t *out) {
    return run<__half, float>(in, row, col, boundary, fill, offset_x, offset_y, flip, out,
                              "halconv_sep_fft_lines_f16f32");
}

}  // extern "C"
