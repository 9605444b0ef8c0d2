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
inline constexpr int tensor_core_depths[] = {96, 128, 160, 192};
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

// Elements between the intermediate's lines: the image's height rounded up to 128 bytes, so
// that the second pass copies them in bulk and the first stores pairs.
constexpr int64_t tensor_core_intermediate_pitch(int64_t image_height) {
    return (image_height + 31) / 32 * 32;
}

// Device memory the call needs beside its buffers: the float32 intermediate.
constexpr size_t tensor_core_workspace_bytes(int64_t out_width, int64_t image_height) {
    return size_t(out_width) * size_t(tensor_core_intermediate_pitch(image_height)) * 4;
}

// Where the passes beat the sliding pass and fft_lines (H200, f32, Gaussian taps,
// bench/results/h200/separable/tensor-core-passes-2026-11-28/): from tensor_core_min_taps
// taps together (kw + kh), on outputs of at least tensor_core_min_outputs samples while both
// axes fit the 128-deep block (65 taps: three 64-output blocks a tile), of at least
// tensor_core_min_outputs_deep beyond (two blocks a tile, 1.45x the tiles). At 4096^2 they
// take 0.136 ms from K = 15 to 63 and 0.19-0.21 ms from 79 to 127, against the sliding
// pass's 0.142 / 0.173 at K = 47 / 63 and fft_lines' 0.21-0.24; at 2048^2 fft_lines stays
// ahead from K = 79 (0.062-0.071 against 0.068-0.074), at 1024^2 both others everywhere.
// Below 48 taps an axis the sliding pass is as fast or faster. 0 outputs (unknown) count
// as small.
inline constexpr int64_t tensor_core_min_taps = 96;
inline constexpr int64_t tensor_core_min_outputs = int64_t(1) << 22;
inline constexpr int64_t tensor_core_min_outputs_deep = int64_t(6) << 20;
// The deepest block whose tiles hold three 64-output blocks (two beyond: shared memory),
// and the longest kernel axis it takes.
inline constexpr int tensor_core_shallow_depth = 128;
inline constexpr int64_t tensor_core_shallow_taps = tensor_core_shallow_depth - 63;

constexpr bool tensor_core_preferred(int64_t kw, int64_t kh, int64_t out_width, int64_t out_height) {
    const int64_t outputs = out_width * out_height;
    const bool shallow = kw <= tensor_core_shallow_taps && kh <= tensor_core_shallow_taps;
    return kw + kh >= tensor_core_min_taps &&
           outputs >= (shallow ? tensor_core_min_outputs : tensor_core_min_outputs_deep);
}

}  // namespace halconv::rk::sep
