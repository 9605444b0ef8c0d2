// The limits a registry row REQUIRES (variants.cmake): each says why the row cannot run
// a request, or nothing. The geometry they test is the schedules' own (schedules/geometry.h).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string_view>

#include "contract.h"
#include "conv2d/conv2d_sliding.h"
#include "fft/halconv_fft.h"
#include "geometry.h"
#include "internal.h"
#include "registry.h"
#include "separable/separable_fft.h"
#include "separable/separable_sliding.h"
#include "separable/separable_tensor_core.h"

namespace halconv::internal {

// The public limit (halconv/types.h) is the kernels' (runtime_kernels/contract.h).
static_assert(tensor_core_max_kernel == rk::contract::tensor_core_max_kernel_edge);

namespace {

// Bytes per accumulated value of the precision's arithmetic.
int accumulator_bytes(Precision p) {
    return p == Precision::f16 ? 2 : (p == Precision::f64 ? 8 : 4);
}

bool gpu_tile_fits_one_row(const Request &r, int extra_bytes_per_row) {
    const int64_t row =
        gpu_staged_row_bytes(int64_t(r.kernel_width), types_of(r.precision).storage.bytes(), extra_bytes_per_row);
    return gpu_tile_fits(row, int64_t(r.kernel_height), 1);
}

}  // namespace

std::string limit_rank1(const Request &r, const VariantRow &row) {
    if (r.rank1_residual <= rank1_tolerance(r.precision)) {
        return {};
    }
    return std::string("algorithm ") + row.algorithm +
           " needs a rank-1 kernel, but the best rank-1 approximation leaves a relative residual of " +
           std::to_string(r.rank1_residual) + " (tolerance " + std::to_string(rank1_tolerance(r.precision)) + " for " +
           to_string(r.precision) + "); use auto (it picks among the algorithms that support the kernel), " +
           "another algorithm, or the separable entry point";
}

std::string limit_low_rank(const Request &r, const VariantRow &row) {
    if (r.kernel_rank >= 1) {
        return {};
    }
    return std::string("algorithm ") + row.algorithm + " needs a kernel of numerical rank at most " +
           std::to_string(max_low_rank) + ", but its best rank-" + std::to_string(max_low_rank) +
           " factors leave a relative residual of " + std::to_string(r.low_rank_residual) + " (tolerance " +
           std::to_string(low_rank_tolerance(r.precision, max_low_rank)) + " for " + to_string(r.precision) +
           "); use auto (it picks among the algorithms that support the kernel) or another algorithm";
}

std::string limit_gpu_low_rank_tile(const Request &r, const VariantRow &) {
    if (gpu_tile_fits_one_row(r, gpu_tile_width * accumulator_bytes(r.precision) * r.kernel_rank)) {
        return {};
    }
    return "kernel " + shape_text(r.kernel_width, r.kernel_height) + " of rank " + std::to_string(r.kernel_rank) +
           " outgrows the one-pass low-rank tile in shared memory (its row passes of every rank beside the image)";
}

std::string limit_gpu_bilateral_tile(const Request &r, const VariantRow &) {
    if (gpu_tile_fits_one_row(r, 0)) {
        return {};
    }
    int largest = 0;  // the largest radius whose window's tile fits
    Request probe = r;
    while (probe.kernel_width = probe.kernel_height = 2 * largest + 3, gpu_tile_fits_one_row(probe, 0)) {
        largest++;
    }
    return "bilateral radius " + std::to_string(r.kernel_width / 2) + " is too large for the GPU tile at precision " +
           to_string(r.precision) + " (the " + std::to_string(gpu_tile_width) + " x " +
           std::to_string(gpu_tile_height) + " tile plus its apron must fit " +
           std::to_string(gpu_shared_budget_bytes) + " bytes of shared memory); allowed up to radius " +
           std::to_string(largest) + " on device cuda (device cpu takes any)";
}

std::string limit_cpu_separable_strip(const Request &r, const VariantRow &) {
    if (r.kernel_height - 1 <= cpu_separable_strip_rows) {
        return {};
    }
    return "kernel height " + std::to_string(r.kernel_height) + " exceeds the strip schedule's " +
           std::to_string(cpu_separable_strip_rows + 1) + " rows";
}

std::string limit_gpu_separable_tile(const Request &r, const VariantRow &) {
    if (gpu_tile_fits_one_row(r, gpu_tile_width * accumulator_bytes(r.precision))) {
        return {};
    }
    return "kernel " + shape_text(r.kernel_width, r.kernel_height) +
           " outgrows the one-pass separable tile in shared memory";
}

std::string limit_separable_sliding_fits(const Request &r, const VariantRow &) {
    const int storage = types_of(r.precision).storage.bytes();
    if (rk::sep::sliding_fits(r.kernel_width, r.kernel_height, storage)) {
        return {};
    }
    // The narrowest strip's layout: the smallest the kernel can need.
    const rk::sep::SlidingLayout l = rk::sep::sliding_layout_for(std::end(rk::sep::sliding_tile_widths)[-1],
                                                                 r.kernel_width, r.kernel_height, storage);
    return "kernel " + shape_text(r.kernel_width, r.kernel_height) + " needs " + std::to_string(l.total_bytes >> 10) +
           " KiB of shared memory for the sliding pass's staged rows and ring of " + std::to_string(l.ring_rows) +
           " row sums, more than its " + std::to_string(rk::sep::sliding_shared_budget >> 10) + " KiB";
}

std::string limit_separable_fft_lines_fits(const Request &r, const VariantRow &) {
    if (r.kernel_width <= rk::sep::fft_max_taps && r.kernel_height <= rk::sep::fft_max_taps) {
        return {};
    }
    return "kernel " + shape_text(r.kernel_width, r.kernel_height) + " is past the fft_lines pass's " +
           std::to_string(rk::sep::fft_max_taps) + " taps per axis (its longest lines are " +
           std::to_string(std::end(rk::sep::fft_line_lengths)[-1]) + " points)";
}

std::string limit_separable_fft_lines_pays(const Request &r, const VariantRow &) {
    if (rk::sep::fft_lines_preferred(r.kernel_width, r.kernel_height, r.output_width, r.output_height,
                                     types_of(r.precision).storage.bytes())) {
        return {};
    }
    const auto &table = rk::sep::fft_lines_crossovers;
    const rk::sep::FftLinesCrossover &c = rk::sep::fft_lines_crossover_for(r.output_width, r.output_height);
    const size_t i = size_t(&c - std::begin(table));
    const int64_t from = i == 0 ? 0 : table[i - 1].below_outputs;
    const std::string outputs =
        c.below_outputs == INT64_MAX ? "outputs of " + std::to_string(from) + " samples and more"
        : from == 0 ? "outputs under " + std::to_string(c.below_outputs) + " samples (or of unknown size)"
                    : "outputs of " + std::to_string(from) + " to " + std::to_string(c.below_outputs - 1) + " samples";
    return "kernel " + shape_text(r.kernel_width, r.kernel_height) + " has fewer than " + std::to_string(c.taps) +
           " taps together (kw + kh), where the sliding pass is the faster on " + outputs;
}

std::string limit_separable_tensor_core_fits(const Request &r, const VariantRow &) {
    if (rk::sep::tensor_core_depth(r.kernel_width) == 0 || rk::sep::tensor_core_depth(r.kernel_height) == 0) {
        return "kernel " + shape_text(r.kernel_width, r.kernel_height) + " is past the tensor-core passes' " +
               std::to_string(rk::sep::tensor_core_max_taps) + " taps per axis";
    }
    if (const auto [major, minor] = current_compute_capability(); major != 9 || minor != 0) {
        return "the tensor-core passes are sm_90a machine code (Hopper's wgmma); this device is " +
               (major == 0 ? std::string("not a CUDA device") : "sm_" + std::to_string(major) + std::to_string(minor));
    }
    return {};
}

std::string limit_separable_tensor_core_pays(const Request &r, const VariantRow &) {
    // The image's width from the output's: mode same keeps it, valid loses kw - 1, full adds it.
    const int64_t image_width = r.mode == Mode::valid  ? int64_t(r.output_width) + r.kernel_width - 1
                                : r.mode == Mode::full ? int64_t(r.output_width) - r.kernel_width + 1
                                                       : int64_t(r.output_width);
    if (!rk::sep::tensor_core_pays(r.kernel_width, r.kernel_height, r.output_width, r.output_height)) {
        return "kernel " + shape_text(r.kernel_width, r.kernel_height) + " on an output of " +
               shape_text(r.output_width, r.output_height) + ": the tensor-core passes pay from " +
               std::to_string(rk::sep::tensor_core_min_taps) + " taps together (kw + kh) on outputs of " +
               std::to_string(rk::sep::tensor_core_min_outputs) + " samples or more";
    }
    if (!rk::sep::tensor_core_rows_copied(image_width)) {
        return "image " + std::to_string(image_width) + " samples wide: the tensor-core passes pay where its rows " +
               "hold a multiple of " + std::to_string(rk::sep::tensor_core_row_samples) +
               " samples (16 bytes, copied by TMA); else they copy by cp.async in 1.5-1.8x the time";
    }
    return {};
}

std::string limit_gpu_grid_width(const Request &r, const VariantRow &row) {
    if (gpu_grid_fits_width(r.output_width, r.kernel_width)) {
        return {};
    }
    return std::string("algorithm ") + row.algorithm + " on CUDA takes outputs up to " +
           std::to_string(gpu_max_width - r.kernel_width + 1) + " samples wide for a kernel " +
           std::to_string(r.kernel_width) + " wide (" + std::to_string(gpu_max_grid_y) +
           " tile columns, CUDA's grid limit); this output is " + std::to_string(r.output_width) +
           " wide (separable kernels run at any width; or split the image)";
}

std::string limit_gpu_conv2d_tile(const Request &r, const VariantRow &row) {
    if (gpu_tile_fits_one_row(r, 0)) {
        return {};
    }
    return "kernel " + shape_text(r.kernel_width, r.kernel_height) + " is too large for the GPU " + row.algorithm +
           " tile at precision " + to_string(r.precision) + ": the " + std::to_string(gpu_tile_width) + " x " +
           std::to_string(gpu_tile_height) + " tile plus apron must fit " + std::to_string(gpu_shared_budget_bytes) +
           " bytes; use naive or autoscheduled";
}

std::string limit_conv2d_sliding_kernel(const Request &r, const VariantRow &row) {
    if (rk::conv2d::sliding_kernel_fits(r.kernel_width, r.kernel_height)) {
        return {};
    }
    return "kernel " + shape_text(r.kernel_width, r.kernel_height) + " is larger than the " + row.algorithm +
           " pass takes (" + std::to_string(rk::conv2d::sliding_max_kernel_edge) + " x " +
           std::to_string(rk::conv2d::sliding_max_kernel_edge) +
           " at most: past it the multiply-adds bound a direct"
           " pass; tensor-core, separable and fft algorithms take larger kernels)";
}

std::string limit_tensor_core_kernel(const Request &r, const VariantRow &row) {
    if (r.kernel_width <= tensor_core_max_kernel && r.kernel_height <= tensor_core_max_kernel) {
        return {};
    }
    return "kernel " + shape_text(r.kernel_width, r.kernel_height) + " is too large for algorithm " + row.algorithm +
           "; the tensor-core kernels take up to " + shape_text(tensor_core_max_kernel, tensor_core_max_kernel) +
           " (use naive, or shared_tiled / autoscheduled)";
}

std::string limit_autoscheduled_scratch(const Request &r, const VariantRow &row) {
    const int64_t w = r.output_width, h = r.output_height, bytes = types_of(r.precision).output.bytes();
    const int64_t scratch =
        std::max<int64_t>(w, autoscheduled_min_extent) * std::max<int64_t>(h, autoscheduled_min_extent) * bytes;
    if (w == 0 || (w >= autoscheduled_min_extent && h >= autoscheduled_min_extent) ||
        scratch <= std::max(4 * w * h * bytes, int64_t(autoscheduled_scratch_floor_bytes))) {
        return {};
    }
    return std::string("algorithm ") + row.algorithm + " runs on outputs of at least " +
           std::to_string(autoscheduled_min_extent) + " per axis: this " + shape_text(int(w), int(h)) +
           " output would need a scratch of " + std::to_string(scratch >> 20) + " MiB, more than " +
           std::to_string(autoscheduled_scratch_floor_bytes >> 20) +
           " MiB and 4 times the output (use auto, naive or shared_tiled)";
}

double fft_tile_cost(int tile, const Request &r) {
    const int step_x = tile - r.kernel_width + 1, step_y = tile - r.kernel_height + 1;
    if (step_x < 1 || step_y < 1) {
        return std::numeric_limits<double>::infinity();
    }
    const double per_pair = double(tile) * double(tile) * std::log2(double(tile));
    if (r.output_width == 0 || r.output_height == 0) {
        return per_pair / (2.0 * step_x * step_y);  // per output
    }
    const double tiles_x = std::ceil(double(r.output_width) / step_x);
    return std::ceil(tiles_x / 2.0) * std::ceil(double(r.output_height) / step_y) * per_pair;
}

std::string limit_fft_tile(const Request &r, const VariantRow &row) {
    // The transform sizes are the algorithm's rows on this device (variants.cmake).
    int best = 0, largest = 0;
    double best_cost = std::numeric_limits<double>::infinity();
    for (const VariantRow &other : variant_rows()) {
        if (other.api != row.api || std::string_view(other.algorithm) != row.algorithm || other.device != row.device ||
            !other.supports(r.precision)) {
            continue;
        }
        const int tile = std::atoi(other.schedule);
        largest = std::max(largest, tile);
        if (const double cost = fft_tile_cost(tile, r); cost < best_cost) {
            best_cost = cost;
            best = tile;
        }
    }
    const int tile = std::atoi(row.schedule);
    if (best == tile) {
        return {};
    }
    if (best == 0) {
        return "kernel " + shape_text(r.kernel_width, r.kernel_height) + " is too large for algorithm " +
               row.algorithm + ": its largest transform is " + shape_text(largest, largest) + " (kernels up to " +
               std::to_string(largest) + " per axis)";
    }
    return std::string("algorithm ") + row.algorithm + " computes this request with " + shape_text(best, best) +
           " transforms, which cost less than " + shape_text(tile, tile);
}

std::string limit_cufft_kernel(const Request &r, const VariantRow &row) {
    if (r.kernel_width <= rk::fft_max_kernel && r.kernel_height <= rk::fft_max_kernel) {
        return {};
    }
    return "kernel " + shape_text(r.kernel_width, r.kernel_height) + " is too large for algorithm " + row.algorithm +
           " on CUDA: its largest transform is " + shape_text(rk::fft_max_tile, rk::fft_max_tile) + " (kernels up to " +
           std::to_string(rk::fft_max_kernel) + " per axis)";
}

std::string limit_cufft_library(const Request & /*r*/, const VariantRow &row) {
    const CudaLibraryInfo cufft = cufft_info();
    return cufft.unavailable_reason.empty()
               ? std::string()
               : std::string("algorithm ") + row.algorithm + " on CUDA needs cuFFT: " + cufft.unavailable_reason;
}

std::string limit_cublas_for_f32(const Request &r, const VariantRow &row) {
    if (r.precision != Precision::f32) {
        return {};  // the float16 GEMMs are halconv's own
    }
    const CudaLibraryInfo cublas = cublas_info();
    return cublas.unavailable_reason.empty()
               ? std::string()
               : std::string("algorithm ") + row.algorithm + " in float32 needs cuBLAS: " + cublas.unavailable_reason;
}

}  // namespace halconv::internal
