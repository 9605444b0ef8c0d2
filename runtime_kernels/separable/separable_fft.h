// The separable correlation of the GPU's `fft_lines` variant (separable_fft.cu) as the host
// plans it, in plain C++ so that the registry's limit (src/limits.cpp), the plan's
// workspace (src/plan.cpp) and the launcher apply one rule.
//
// Two passes of 1D overlap-save along lines: the row pass filters every image row along x
// into a float32 intermediate (the output's columns, every image row), the column pass
// filters the intermediate along y into the output. A pass cuts each line into blocks of
// `step` = M - k + 1 outputs; a block's M samples (read through the boundary rule) are
// transformed (fft_line.cuh), multiplied by the taps' spectrum and transformed back, and
// its first `step` points are the outputs. Two real lines ride in one complex line (rows
// y and y + 1, columns x and x + 1): the taps are real, so their correlation keeps the
// real and imaginary parts apart, and no real-transform untangling is needed.
//
// A pass's time is what every block does (reading and writing the lines) plus a cost per
// transformed point that grows with the line length faster than its radix passes do
// (fewer lines per block, block-wide barriers; fft_point_cost), so each axis takes the line
// length M that minimizes blocks x M x that cost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <iterator>

#include "fft/fft_line_plan.h"
#include "fft/halconv_fft.h"
#include "separable/separable_sliding.h"

namespace halconv::rk::sep {

// Line lengths, shortest first, up to the fft stage's longest transform. A block of M
// samples gives M - k + 1 outputs; kernels up to the fft stage's limit (fft_max_kernel), so
// that every block gives two at least.
inline constexpr int fft_line_lengths[] = {256, 512, 1024, 2048, fft_max_tile};
inline constexpr int fft_max_taps = fft_max_kernel;
// Where the separable entry takes these passes over the sliding pass (registry limit
// separable_fft_lines_pays): from `taps` together (kw + kh) on outputs of fewer than
// `below_outputs` samples (the first entry that holds; unknown outputs, 0, take the first),
// or wherever the sliding pass does not fit. The sliding pass's time grows with the taps,
// these passes' with the line length only, from a fixed cost of about 0.018 ms (the two
// passes' launches; a plan prepares the taps' tables once). Around 1024^2 the sliding pass
// fills the GPU only with short bands whose row sums it computes again for every band's
// apron, so it gives way there first (1024^2 f32: 0.016 ms at 31 x 31 taps, 0.027 at
// 47 x 47, against the passes' 0.020); on smaller outputs the passes' fixed cost weighs
// more, on larger ones the sliding pass keeps the GPU full with long bands. Fitted on the
// H200 (bench/results/h200/separable/crossover-2026-11-28/: the ring-by-columns sliding pass
// against the passes with a plan's tables; f32 at 512^2 to 8192^2 in both modes, f16f32
// and f16 at 512^2 to 4096^2; square kernels 31 to 225 and lopsided ones; 248 cases):
// square kernels cross over between 63 and 79 taps at 512^2, 31 and 47 at 1024^2, near 47
// at 2048^2, near 79 at 3840 x 2160 and 4096^2, between 79 and 95 at 8192^2. This rule's
// choice is 0.5 % slower than the faster of the two on (geometric) average, 1.38x at worst
// (193 x 3 at 512^2); the rule before it (150, 200 below 2^20 outputs; fitted on the H100
// before either change) was 3.1 % there, 1.79x at worst (95 x 95 valid at 1024^2).
struct FftLinesCrossover {
    int64_t below_outputs;
    int taps;
};
inline constexpr FftLinesCrossover fft_lines_crossovers[] = {
    {int64_t(1) << 19, 140}, {int64_t(1) << 21, 80}, {INT64_MAX, 150}};
inline const FftLinesCrossover &fft_lines_crossover_for(int64_t out_width, int64_t out_height) {
    const int64_t outputs = out_width * out_height;
    for (const FftLinesCrossover &c : fft_lines_crossovers) {
        if (outputs < c.below_outputs) {
            return c;
        }
    }
    return std::end(fft_lines_crossovers)[-1];
}
inline int fft_lines_crossover(int64_t out_width, int64_t out_height) {
    return fft_lines_crossover_for(out_width, out_height).taps;
}
inline bool fft_lines_preferred(int64_t kw, int64_t kh, int64_t out_width, int64_t out_height, int storage_bytes) {
    return kw + kh >= fft_lines_crossover(out_width, out_height) || !sliding_fits(kw, kh, storage_bytes);
}

// Points per thread of a pass's transforms (fft_line::Shape): 8 along rows (more lines per
// block), 16 along columns (one exchange fewer). At 1024-2048 points the column form
// spills 84-100 bytes past a 512-thread block's 128 registers; 8 points there measured
// 1.12-1.26x slower at 255 and 511 taps (4096^2, 8192^2), nowhere much faster
// (bench/results/h100/separable/fft-lines-2026-11-28/).
enum class FftAxis { rows, columns };
inline constexpr int fft_points(FftAxis axis) {
    return axis == FftAxis::columns ? 16 : 8;
}

// The time per transformed point of each of fft_line_lengths, relative to the shortest's,
// rows and columns apart. Fitted on the H100 (4096^2 f32, kernels of 31 to 193 taps, each
// length forced on one axis with the other's own choice, time = a + sum over the axes of
// transformed points x cost, within 1.7 % of every case; bench/results/h100/separable/
// fft-lines-tables-2026-11-28/): 1024-point rows take twice the time per point of 512-point
// ones, where counting radix passes said 4 / 3; 4096-point lines 3-4x the 256-point ones'.
// (Counting passes had picked 4096-point columns for 4002 outputs, one block, and made the
// valid mode's 95-127 taps at 4096^2 13-27 % slower than the same mode's.)
inline constexpr double fft_point_cost[2][std::size(fft_line_lengths)] = {{1.00, 1.01, 2.04, 2.55, 3.97},
                                                                          {1.00, 1.38, 1.80, 2.35, 3.03}};

// The line length for `outputs` samples of a pass whose kernel has `taps` (<= fft_max_taps):
// the least blocks x M x fft_point_cost (the shortest on a tie); 0 past fft_max_taps.
inline int fft_line_length(int64_t outputs, int taps, FftAxis axis) {
    int best = 0;
    double best_cost = 0;
    for (size_t i = 0; i < std::size(fft_line_lengths); i++) {
        const int m = fft_line_lengths[i];
        if (m < taps) {
            continue;
        }
        const int64_t step = m - taps + 1;
        const double cost = double((outputs + step - 1) / step) * m * fft_point_cost[int(axis)][i];
        if (best == 0 || cost < best_cost) {
            best = m;
            best_cost = cost;
        }
    }
    return best;
}

// The stage's scratch (one slice): the intermediate, then the tables: the two spectra,
// the twiddle table (fft_line::kTableSize entries, for the spectra), each pass's
// transform's pass tables (fft_line_plan.h), the taps as float32 (both lists, in the order
// they are correlated) and the constants (FftLinesConstants), each 256-byte aligned. The
// tables depend only on the taps, the line lengths, flip and fill: a plan prepares them
// once (FftLinesTables), and its calls take only the intermediate, tables_offset bytes.
struct FftLinesLayout {
    int row_length = 0, column_length = 0;  // M of each pass
    int64_t mid_pitch = 0;                  // floats between intermediate rows: even (float2 pairs)
    size_t mid_offset = 0, row_spectrum_offset = 0, column_spectrum_offset = 0, twiddles_offset = 0,
           row_pass_tables_offset = 0, column_pass_tables_offset = 0, taps_offset = 0, constants_offset = 0,
           total_bytes = 0;
    size_t tables_offset = 0;  // where the tables begin (the row spectrum's offset)
};

// What the setup kernel derives from the taps for the passes: the largest |sample| each
// pass transforms (larger ones, NaN and Inf go to direct sums: their transforms could
// overflow or spread them over the block), and the row pass's value of an image row
// beyond a constant boundary (fill times the sum of the row taps).
struct FftLinesConstants {
    float row_limit, column_limit, fill_row;
};

inline FftLinesLayout fft_lines_layout(int64_t out_width, int64_t out_height, int64_t image_height, int kw, int kh) {
    const auto aligned = [](size_t bytes) { return (bytes + 255) / 256 * 256; };
    FftLinesLayout l;
    l.row_length = fft_line_length(out_width, kw, FftAxis::rows);
    l.column_length = fft_line_length(out_height, kh, FftAxis::columns);
    l.mid_pitch = (out_width + 1) / 2 * 2;
    size_t at = 0;
    l.mid_offset = at;
    at += aligned(size_t(l.mid_pitch) * size_t(image_height) * sizeof(float));
    l.tables_offset = at;
    l.row_spectrum_offset = at;
    at += aligned(size_t(l.row_length) * 8);
    l.column_spectrum_offset = at;
    at += aligned(size_t(l.column_length) * 8);
    l.twiddles_offset = at;
    at += aligned(size_t(fft_line::kTableSize) * 8);
    l.row_pass_tables_offset = at;
    at += aligned(size_t(fft_line::pass_table_size(l.row_length, fft_points(FftAxis::rows))) * 8);
    l.column_pass_tables_offset = at;
    at += aligned(size_t(fft_line::pass_table_size(l.column_length, fft_points(FftAxis::columns))) * 8);
    l.taps_offset = at;
    at += aligned(size_t(kw + kh) * sizeof(float));
    l.constants_offset = at;
    at += aligned(sizeof(FftLinesConstants));
    l.total_bytes = at;
    return l;
}

// The tables of one kernel in device memory, prepared once (prepare_fft_lines): what a
// halconv::Plan holds and installs for its calls (WorkspaceScope). A call takes them where
// its taps' shape, storage type, line lengths, flip and fill are theirs, and skips its
// setup and spectra kernels; any other call (or one without them) computes its own.
struct FftLinesTables {
    int storage_bytes = 0, kw = 0, kh = 0, row_length = 0, column_length = 0;
    bool flip = false;
    float fill = 0;        // as the storage type rounds it
    void *data = nullptr;  // the layout's tables, from its tables_offset

    bool matches(int storage, int w, int h, int rows, int columns, bool flipped, float fill_s) const {
        // fill by its bits, so that a NaN fill matches its own tables.
        return storage == storage_bytes && w == kw && h == kh && rows == row_length && columns == column_length &&
               flipped == flip && std::memcmp(&fill_s, &fill, sizeof fill) == 0;
    }
};

// Device bytes of the tables of kw x kh taps for an output of out_width x out_height.
inline size_t fft_lines_tables_bytes(int kw, int kh, int64_t out_width, int64_t out_height) {
    const FftLinesLayout l = fft_lines_layout(out_width, out_height, 0, kw, kh);
    return l.total_bytes - l.tables_offset;
}

// Queues on `stream` the tables of kw x kh taps in the storage type of `storage_bytes`
// (4: float32, 2: float16) at row_taps / col_taps on the device, reversed when flip, the
// constant rule's fill rounded to the storage type, for an output of out_width x
// out_height, into `memory` (fft_lines_tables_bytes of device memory that outlives every
// call taking them, each ordered after this work); returns their description. Throws
// std::runtime_error saying why (a size past the pass's limits, a launch failure).
FftLinesTables prepare_fft_lines(int storage_bytes, const void *row_taps, const void *col_taps, int kw, int kh,
                                 bool flip, double fill, int64_t out_width, int64_t out_height, void *memory,
                                 void *stream);

}  // namespace halconv::rk::sep
