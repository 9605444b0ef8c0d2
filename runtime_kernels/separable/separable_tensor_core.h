// The separable correlation of the GPU's `tensor_core` variant (separable_tensor_core_sm90.cu)
// as the host plans it, in plain C++ so that the registry's limits (src/limits.cpp, CPU-only
// builds included), the plan's workspace and the launcher apply one rule.
//
// Two passes of one kernel on Hopper's warpgroup tensor cores (wgmma), float32 carried as
// in-place float16 parts (common/split_f32.h's floating_three): each pass filters the lines
// of its input along x and writes its sums transposed, so the first pass (the row taps over
// the image) leaves an intermediate of the output's width in lines of the image's height,
// and the second (the column taps over that) the output as it lies. Each pass applies the
// boundary rule along its lines only; the second's constant boundary is the fill times the
// row taps' sum (a row of the fill, filtered).
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>

namespace halconv::rk::sep {

// Lines a tile: the wgmma's N.
inline constexpr int tensor_core_tile_lines = 32;
// The depths of the taps' Toeplitz blocks built (64 outputs from 64 + K - 1 samples, in k16
// slices): each depth is one kernel, so the kernel for K runs at the smallest depth that
// holds it and pays the zero taps' products beyond K (the tensor cores' share of the pass is
// small: bench/results/h200/separable/wgmma-passes-2026-11-28/).
inline constexpr int tensor_core_depths[] = {96, 128, 160, 192, 224, 256};
// Taps per axis the deepest block takes.
inline constexpr int tensor_core_max_taps = std::end(tensor_core_depths)[-1] - 63;

// The depth for a kernel of k taps; 0 past tensor_core_max_taps.
constexpr int tensor_core_depth(int64_t k) {
    for (int d : tensor_core_depths) {
        if (k >= 1 && 64 + k - 1 <= d) {
            return d;
        }
    }
    return 0;
}

// Zero taps a pass puts before its k taps where an output's window starts `base` samples into
// the line (base: output 0's first sample): with them, each tile's staged samples start on a
// 16-byte boundary while its first output stays a multiple of the tile's span, wherever the
// kernel so led still takes its own depth. Else 0, and the first tile starts up to 3 outputs
// before output 0 instead, which costs a tile a line where the span divides the line: with the
// lead, K = 143-157 run 8-10 % faster at 4096^2 (H200, bench/results/h200/separable/
// tile-lead-2026-11-29/).
constexpr int tensor_core_lead(int64_t k, int64_t base) {
    const int misalignment = int(((base % 4) + 4) % 4);
    return tensor_core_depth(k + misalignment) == tensor_core_depth(k) ? misalignment : 0;
}

// Elements between the intermediate's lines: the image's height rounded up to 128 bytes, so
// that the second pass copies them in bulk and the first stores pairs.
constexpr int64_t tensor_core_intermediate_pitch(int64_t image_height) {
    return (image_height + 31) / 32 * 32;
}

// Device memory the call needs beside its buffers: the float32 intermediate.
constexpr size_t tensor_core_workspace_bytes(int64_t out_width, int64_t image_height) {
    return size_t(out_width) * size_t(tensor_core_intermediate_pitch(image_height)) * 4;
}

// Where the passes beat the sliding pass and fft_lines (H200, f32, Gaussian taps): from
// tensor_core_min_taps taps together (kw + kh) on outputs of at least tensor_core_min_outputs
// samples. The passes' time is nearly flat in K within a depth (4096^2: 0.093-0.097 ms from
// K = 17 to 33, 0.098-0.102 from 35 to 63, 0.115-0.122 from 79 to 127, 0.149-0.159 to 193);
// the sliding pass's grows with K (0.073, 0.092, 0.100, 0.113 at K = 17, 25, 31, 33) and
// fft_lines' is 0.21-0.27 from 79. At K = 33 the passes lead at 2048^2 to 8192^2 (by 7-18 %);
// at K = 31 they lead by 1-6 % from 3840x2160 but trail by 11 % at 2048^2, and below 27 they
// trail everywhere (bench/results/h200/separable/crossover-2026-11-29/). From 79 they lead
// fft_lines (by 8-45 %), but for a tie at 2048^2 K = 143-151; at 1024^2 both others lead
// everywhere (../tile-shapes-2026-11-28/). 0 outputs (unknown) count as small.
inline constexpr int64_t tensor_core_min_taps = 66;
inline constexpr int64_t tensor_core_min_outputs = int64_t(1) << 22;
// Samples whose multiple a row must hold for TMA to copy it (rows 16 bytes apart). Elsewhere
// the producer copies the rows by 4-byte cp.async: an image 4094 wide ran 1.6-1.8x as long as
// one 4096 wide (0.16-0.20 ms at K = 33-121; 3.6-3.9x sample by sample through the rule),
// behind the sliding pass at K = 33 (0.11 ms), level at 63 (0.17), ahead of fft_lines at 121
// (0.202 against 0.252; bench/results/h200/separable/boundary-cost-2026-11-29/,
// ../row-copies-2026-11-29/). Without a crossover on such widths the passes are preferred only
// for images whose width is such a multiple (the rows of a dense image).
inline constexpr int64_t tensor_core_row_samples = 4;

// Kernels and outputs large enough for the passes to lead.
constexpr bool tensor_core_pays(int64_t kw, int64_t kh, int64_t out_width, int64_t out_height) {
    return kw + kh >= tensor_core_min_taps && out_width * out_height >= tensor_core_min_outputs;
}
// Images whose rows TMA copies.
constexpr bool tensor_core_rows_copied(int64_t image_width) {
    return image_width % tensor_core_row_samples == 0;
}
constexpr bool tensor_core_preferred(int64_t kw, int64_t kh, int64_t out_width, int64_t out_height,
                                     int64_t image_width) {
    return tensor_core_pays(kw, kh, out_width, out_height) && tensor_core_rows_copied(image_width);
}

}  // namespace halconv::rk::sep
