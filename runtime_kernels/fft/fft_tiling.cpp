// The tiling of the cuFFT stage (halconv_fft.h): host code only, so that a build without
// CUDA, its limits and its tests share it.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/workspace_scope.h"
#include "fft/halconv_fft.h"

namespace halconv::rk {

size_t fft_block_bytes(const FftTiling &t, FftPrecision p) {
    return align_scratch(size_t(t.tile_x) * size_t(t.tile_y) * (p == FftPrecision::f64 ? 8 : 4));
}

double fft_transform_limit(double tile_elements, double kernel_abs_sum, bool f64_transforms) {
    const double range =
        f64_transforms ? std::numeric_limits<double>::max() : double(std::numeric_limits<float>::max());
    return range / (4.0 * tile_elements * std::max(1.0, kernel_abs_sum));
}

int fft_spectrum_pitch(const FftTiling &t, FftPrecision p) {
    const int values = t.tile_x / 2 + 1;
    return p == FftPrecision::f64 ? values : (values + 3) / 4 * 4;
}

size_t fft_block_spectrum_bytes(const FftTiling &t, FftPrecision p) {
    return align_scratch(size_t(t.tile_y) * size_t(fft_spectrum_pitch(t, p)) * 2 * (p == FftPrecision::f64 ? 8 : 4));
}

size_t fft_tile_buffer_bytes(const FftTiling &t, FftPrecision p) {
    return (p == FftPrecision::f64 ? fft_block_bytes(t, p) : 0) + fft_block_spectrum_bytes(t, p);
}

namespace {

int passes(int n, int points) {
    int p = 0;
    for (; n > 1; p++) {
        n /= std::min(n, points);
    }
    return p;
}

// Estimated nanoseconds of a tiling on an H100 (bench/results/h100/fft/fused/RUN.md).
// The fused kernels (float32 transforms) are bound by latency more than bandwidth: about
// 8.4 ns per thousand tile samples, 2.5 more per radix-16 pass of the columns and 1.0
// per radix-8 pass of the rows, 6.1 more when a tile's spectrum does not fit the batch
// budget (L2) or its columns are 4096 long (two per block: half-sector loads, one block
// per multiprocessor), 5 us per batch. cuFFT's (float64): log2(T_x T_y) + 8
// element-passes per sample and 2^24 per batch (6 to 10 launches).
double estimated_cost(const FftTiling &t, FftPrecision precision, int64_t batches) {
    const double samples = double(t.tiles()) * double(t.tile_x) * double(t.tile_y);
    if (precision == FftPrecision::f64) {
        return samples * (std::log2(double(t.tile_x) * double(t.tile_y)) + 8.0) + double(batches) * double(1 << 24);
    }
    const bool spills = fft_block_spectrum_bytes(t, precision) > fft_batch_budget || t.tile_y >= 4096;
    const double per_thousand = 8.4 + 2.5 * passes(t.tile_y, 16) + 1.0 * passes(t.tile_x / 2, 8) + (spills ? 6.1 : 0.0);
    return samples * per_thousand / 1000.0 + double(batches) * 5000.0;
}

}  // namespace

FftTiling fft_tiling(int out_width, int out_height, int kernel_width, int kernel_height, FftPrecision precision) {
    const auto pow2_at_least = [](int64_t n) {
        int64_t p = 16;
        while (p < n) {
            p *= 2;
        }
        return p;
    };
    FftTiling best;
    double best_cost = std::numeric_limits<double>::infinity();
    const int64_t cap_x = std::min<int64_t>(fft_max_tile, pow2_at_least(int64_t(out_width) + kernel_width - 1));
    const int64_t cap_y = std::min<int64_t>(fft_max_tile, pow2_at_least(int64_t(out_height) + kernel_height - 1));
    // The fused kernels' blocks hold at most 32 columns: tiles under 128 leave most of
    // their threads idle, so they are taken only where the image is that small.
    const int64_t least = precision == FftPrecision::f64 ? 16 : 128;
    for (int64_t tx = std::min(least, cap_x); tx <= cap_x; tx *= 2) {
        for (int64_t ty = std::min(least, cap_y); ty <= cap_y; ty *= 2) {
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
            const int64_t fits = std::max<int64_t>(1, int64_t(fft_batch_budget / fft_tile_buffer_bytes(t, precision)));
            const int64_t batches = (tiles + fits - 1) / fits;
            t.batch = int(std::min<int64_t>((tiles + batches - 1) / batches, 65535));
            const double cost = estimated_cost(t, precision, (tiles + t.batch - 1) / t.batch);
            if (cost < best_cost) {
                best_cost = cost;
                best = t;
            }
        }
    }
    return best;
}

}  // namespace halconv::rk
