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
// The time of a pass grows with the transformed points times the transform's passes
// (bench/results/h100/separable/fft-lines-2026-11-28/: rows and columns of 256 to 2048
// points at 4096^2, K = 15 to 193), so each axis takes the line length M that minimizes
// blocks x M x passes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "fft/halconv_fft.h"
#include "separable/separable_sliding.h"

namespace halconv::rk::sep {

// Line lengths, shortest first, up to the fft stage's longest transform. A block of M
// samples gives M - k + 1 outputs; kernels up to the fft stage's limit (fft_max_kernel), so
// that every block gives two at least.
inline constexpr int fft_line_lengths[] = {256, 512, 1024, 2048, fft_max_tile};
inline constexpr int fft_max_taps = fft_max_kernel;
// Where the separable entry takes these passes over the sliding pass (registry limit
// separable_fft_lines_pays): from kw + kh = 200 taps together, or wherever the sliding pass
// does not fit. The sliding pass's time grows with the taps, these passes' with the line
// length only; on the H100 (bench/results/h100/separable/crossover-2026-11-28/: f32, f16f32,
// f16; 512^2 to 8192^2; square kernels 31 to 225 and lopsided ones) square kernels cross
// over between 95 and 111 taps from 2048^2 up (sooner below), 193 x 3 stays faster sliding
// everywhere and 3 x 193 nearly so. Over the 330 cases measured, this rule's choice is 1.5 %
// slower than the faster of the two on (geometric) average, where the sliding pass alone
// was 30 % (3.5x at worst); it is 1.46x at worst where the sliding pass keeps 79 to 95 taps at
// 1024^2, and in 9 of the 186 cases it gives the passes they are up to 1.22x slower than
// the sliding pass (225 x 31 at 512^2), 0.6-8 % in the other 8. (Same mode; in valid mode
// at 4096^2 the passes are slower, 7-11 % behind the sliding pass at 111 and 127 taps.)
inline constexpr int fft_lines_crossover_taps = 200;
inline bool fft_lines_preferred(int64_t kw, int64_t kh, int storage_bytes) {
    return kw + kh >= fft_lines_crossover_taps || !sliding_fits(kw, kh, storage_bytes);
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
// Twiddles: exp(-2 pi i k / 4096), k < 4096 (fft_line::kTableSize).
inline constexpr int fft_twiddles = 4096;

// Radix passes of an M-point transform with `points` per thread (fft_line::passes_of).
inline constexpr int fft_passes(int m, int points) {
    int p = 0;
    while (m > 1) {
        m /= m >= points ? points : m;
        p++;
    }
    return p;
}

// The line length for `outputs` samples of a pass whose kernel has `taps` (<= fft_max_taps):
// the fewest transformed points times passes (the shortest on a tie); 0 past fft_max_taps.
inline int fft_line_length(int64_t outputs, int taps, FftAxis axis) {
    int best = 0;
    double best_cost = 0;
    for (int m : fft_line_lengths) {
        if (m < taps) {
            continue;
        }
        const int64_t step = m - taps + 1;
        const double cost = double((outputs + step - 1) / step) * m * fft_passes(m, fft_points(axis));
        if (best == 0 || cost < best_cost) {
            best = m;
            best_cost = cost;
        }
    }
    return best;
}

// The stage's scratch (one slice): the intermediate, the two spectra, the twiddles, the taps
// as float32 (both lists, in the order they are correlated) and the per-call constants
// (FftLinesConstants), each 256-byte aligned.
struct FftLinesLayout {
    int row_length = 0, column_length = 0;  // M of each pass
    int64_t mid_pitch = 0;                  // floats between intermediate rows: even (float2 pairs)
    size_t mid_offset = 0, row_spectrum_offset = 0, column_spectrum_offset = 0, twiddles_offset = 0, taps_offset = 0,
           constants_offset = 0, total_bytes = 0;
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
    l.row_spectrum_offset = at;
    at += aligned(size_t(l.row_length) * 8);
    l.column_spectrum_offset = at;
    at += aligned(size_t(l.column_length) * 8);
    l.twiddles_offset = at;
    at += aligned(size_t(fft_twiddles) * 8);
    l.taps_offset = at;
    at += aligned(size_t(kw + kh) * sizeof(float));
    l.constants_offset = at;
    at += aligned(sizeof(FftLinesConstants));
    l.total_bytes = at;
    return l;
}

}  // namespace halconv::rk::sep
