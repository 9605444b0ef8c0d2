// The tiling of the cuFFT stage (halconv_fft.h): host code only, so that a build without
// CUDA, its limits and its tests share it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "halconv_fft.h"
#include "workspace_scope.h"

namespace halconv::rk {

size_t fft_block_bytes(const FftTiling &t, FftPrecision p) {
    return align_scratch(size_t(t.tile_x) * size_t(t.tile_y) * (p == FftPrecision::f64 ? 8 : 4));
}

double fft_transform_limit(double tile_elements, double kernel_abs_sum, bool f64_transforms) {
    const double range =
        f64_transforms ? std::numeric_limits<double>::max() : double(std::numeric_limits<float>::max());
    return range / (4.0 * tile_elements * std::max(1.0, kernel_abs_sum));
}

size_t fft_block_spectrum_bytes(const FftTiling &t, FftPrecision p) {
    return align_scratch(size_t(t.tile_y) * size_t(t.tile_x / 2 + 1) * 2 * (p == FftPrecision::f64 ? 8 : 4));
}

FftTiling fft_tiling(int out_width, int out_height, int kernel_width, int kernel_height, FftPrecision precision) {
    const auto pow2_at_least = [](int64_t n) {
        int64_t p = 16;
        while (p < n) {
            p *= 2;
        }
        return p;
    };
    // Estimated time in units of one transform element-pass: a T_x x T_y transform
    // costs log2(T_x T_y) passes, gather / product / crop and the inverse's extra pass
    // about 8 more; a batch costs its launches (about 2^24 units on an H100: 6 to 10
    // launches of a few microseconds).
    constexpr double batch_cost = double(1 << 24);
    FftTiling best;
    double best_cost = std::numeric_limits<double>::infinity();
    const int64_t cap_x = std::min<int64_t>(fft_max_tile, pow2_at_least(int64_t(out_width) + kernel_width - 1));
    const int64_t cap_y = std::min<int64_t>(fft_max_tile, pow2_at_least(int64_t(out_height) + kernel_height - 1));
    for (int64_t tx = 16; tx <= cap_x; tx *= 2) {
        for (int64_t ty = 16; ty <= cap_y; ty *= 2) {
            if (tx < kernel_width || ty < kernel_height || tx * ty > (int64_t(1) << 24)) {
                continue;
            }
            FftTiling t;
            t.tile_x = int(tx);
            t.tile_y = int(ty);
            t.step_x = int(tx) - kernel_width + 1;
            t.step_y = int(ty) - kernel_height + 1;
            t.tiles_x = int((int64_t(out_width) + t.step_x - 1) / t.step_x);
            t.tiles_y = int((int64_t(out_height) + t.step_y - 1) / t.step_y);
            const int64_t tiles = int64_t(t.tiles_x) * t.tiles_y;
            if (tiles > (int64_t(1) << 30)) {
                continue;
            }
            const size_t per_tile = fft_block_bytes(t, precision) + fft_block_spectrum_bytes(t, precision);
            const int64_t fits = std::max<int64_t>(1, int64_t(fft_batch_budget / per_tile));
            const int64_t batches = (tiles + fits - 1) / fits;
            t.batch = int(std::min<int64_t>((tiles + batches - 1) / batches, 65535));
            const double elements = double(tx) * double(ty);
            const double cost = double(tiles) * elements * (std::log2(elements) + 8.0) +
                                double((tiles + t.batch - 1) / t.batch) * batch_cost;
            if (cost < best_cost) {
                best_cost = cost;
                best = t;
            }
        }
    }
    return best;
}

}  // namespace halconv::rk
