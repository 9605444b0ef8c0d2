// The registry of variants (variants.cmake) as src/ sees it: one row per registry line,
// generated into halconv_registry.inc by cmake/halconv_registry.cmake, and the lookups
// every entry point uses.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "HalideRuntime.h"
#include "halconv/options.h"

namespace halconv::internal {

// The entry points, as variants.cmake's halconv_api names them.
enum class Api { correlate2d, multichannel, edges, unsharp, recursive_gaussian, bilateral };

// How a generator's pipelines are called (halconv_generator's SIGNATURE).
enum class Signature {
    kernel2d,
    kernel2d_extended,
    separable,
    low_rank,
    edges,
    unsharp,
    recursive_gaussian,
    bilateral
};

// (input, kernel, boundary, fill, offset_x, offset_y, flip, output)
using Kernel2dFn = int (*)(halide_buffer_t *, halide_buffer_t *, int32_t, double, int32_t, int32_t, bool,
                           halide_buffer_t *);
// The same with the extended image as a second output.
using Kernel2dExtendedFn = int (*)(halide_buffer_t *, halide_buffer_t *, int32_t, double, int32_t, int32_t, bool,
                                   halide_buffer_t *, halide_buffer_t *);
// The valid form of an extern-stage generator: (input, kernel, flip, output).
using ValidFn = int (*)(halide_buffer_t *, halide_buffer_t *, bool, halide_buffer_t *);
// (input, row_kernel, col_kernel, boundary, fill, offset_x, offset_y, flip, output)
using SeparableFn = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, int32_t, double, int32_t, int32_t,
                            bool, halide_buffer_t *);
// (input, row_factors, col_factors, boundary, fill, offset_x, offset_y, flip, output): the
// factors 2D, (tap, rank).
using LowRankFn = SeparableFn;
// (input, boundary, fill, threshold, output)
using EdgesFn = int (*)(halide_buffer_t *, int32_t, float, float, halide_buffer_t *);
// (input, kernel, boundary, fill, offset_x, offset_y, amount, output)
using UnsharpFn = int (*)(halide_buffer_t *, halide_buffer_t *, int32_t, float, int32_t, int32_t, float,
                          halide_buffer_t *);
// (input, coefficients, powers, boundary, fill, output)
using RecursiveGaussianFn = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, int32_t, double,
                                    halide_buffer_t *);

// (input, boundary, fill, sigma_spatial, sigma_range, radius, output)
using BilateralFn = int (*)(halide_buffer_t *, int32_t, double, double, double, int32_t, halide_buffer_t *);

// A row's entry points for one precision: the member of its signature, plus `valid`
// for generators with a valid form, and the batch forms (the same signatures over
// batches (x, y, n): BATCH_FORM in cmake/halconv_registry.cmake) where the row has them.
// All null where the row lacks the precision.
struct PipelineFns {
    Kernel2dFn kernel2d = nullptr;
    Kernel2dExtendedFn kernel2d_extended = nullptr;
    ValidFn valid = nullptr;
    Kernel2dFn kernel2d_batch = nullptr;
    Kernel2dExtendedFn kernel2d_extended_batch = nullptr;
    ValidFn valid_batch = nullptr;
    SeparableFn separable = nullptr;
    LowRankFn low_rank = nullptr;
    EdgesFn edges = nullptr;
    UnsharpFn unsharp = nullptr;
    RecursiveGaussianFn recursive_gaussian = nullptr;
    BilateralFn bilateral = nullptr;

    bool any() const {
        return kernel2d || kernel2d_extended || separable || low_rank || edges || unsharp || recursive_gaussian ||
               bilateral;
    }
};

// What a row's limits see of a request.
struct Request {
    Device device = Device::cpu;  // resolved
    Precision precision = Precision::f32;
    Mode mode = Mode::same;
    Boundary boundary = Boundary::constant;
    int kernel_width = 0, kernel_height = 0;
    double rank1_residual = 0.0;  // relative residual of the best rank-1 approximation (0: given as factors)
    // The kernel's numerical rank, 1 ... max_low_rank, or 0 above it (low_rank_factorize), and
    // the relative residual of its factors (of rank max_low_rank when above).
    int kernel_rank = 0;
    double low_rank_residual = 0.0;
    int output_width = 0, output_height = 0;  // 0: not known (no limit on them applies)
};

struct VariantRow;
// A REQUIRES of the registry (src/limits.cpp): "" when the row can run the request, else why not.
using Limit = std::string (*)(const Request &, const VariantRow &);

struct VariantRow {
    Api api;
    const char *algorithm;  // its name in the API's enum
    int value;              // its value there
    Device device;
    const char *generator;
    const char *schedule;
    Signature signature;
    bool tensor_cores;
    bool autoscheduled;   // scheduled by a Halide autoscheduler for large outputs (geometry.h)
    bool finite_input;    // a transform: an image with NaN or Inf runs a direct variant (plan.cpp)
    unsigned modes;       // bit i: Mode i
    unsigned boundaries;  // bit i: Boundary i
    Limit limits[4];
    PipelineFns pipelines[4];  // per Precision
    const char *libraries[4];  // AOT library names per Precision (nullptr where none)
    const char *doc;

    bool supports(Precision p) const { return pipelines[static_cast<int>(p)].any(); }
    const PipelineFns &fns(Precision p) const { return pipelines[static_cast<int>(p)]; }
    // <generator>_<schedule>: the name Dispatch::variant reports.
    std::string name() const { return std::string(generator) + "_" + schedule; }
    // Why this row cannot run `r` (precision, mode, boundary, then its limits in order), or "".
    std::string refusal(const Request &r) const;
};

struct ApiInfo {
    Api api;
    const char *name;
    const char *enum_name;  // "" when the API has no public enum
    bool has_automatic;
    std::vector<const char *> algorithms;  // by enum value, "auto" first when has_automatic
    std::vector<const char *> docs;
};

std::span<const VariantRow> variant_rows();
const ApiInfo &api_info(Api api);
// The name of enum value `value` of `api` ("?" when out of range).
const char *algorithm_name(Api api, int value);
std::optional<int> algorithm_value(Api api, std::string_view name);
// Whether `value` is one of the API's enum values.
bool valid_algorithm(Api api, int value);
// The rows of one algorithm on one device, in registry order.
std::vector<const VariantRow *> rows_of(Api api, int value, Device device);
// Every algorithm of the API that has a row on `device`, in registry order.
std::vector<int> algorithms_on(Api api, Device device);
// "naive, shared_tiled, ..." for messages: the API's algorithms with a row on `device`
// (any device for Device::automatic), automatic excluded.
std::string algorithm_list(Api api, Device device = Device::automatic);

// The registry's limits (REQUIRES in variants.cmake), defined in src/limits.cpp.
std::string limit_rank1(const Request &r, const VariantRow &row);
std::string limit_low_rank(const Request &r, const VariantRow &row);
std::string limit_gpu_low_rank_tile(const Request &r, const VariantRow &row);
// The bilateral filter's window is the request's kernel (2 radius + 1 square).
std::string limit_gpu_bilateral_tile(const Request &r, const VariantRow &row);
std::string limit_cpu_separable_strip(const Request &r, const VariantRow &row);
std::string limit_gpu_separable_tile(const Request &r, const VariantRow &row);
std::string limit_separable_sliding_fits(const Request &r, const VariantRow &row);
std::string limit_separable_fft_lines_fits(const Request &r, const VariantRow &row);
std::string limit_separable_fft_lines_pays(const Request &r, const VariantRow &row);
// Kernels up to tensor_core_max_taps per axis on an sm_90 device.
std::string limit_separable_tensor_core_fits(const Request &r, const VariantRow &row);
std::string limit_separable_tensor_core_pays(const Request &r, const VariantRow &row);
std::string limit_gpu_grid_width(const Request &r, const VariantRow &row);
std::string limit_gpu_conv2d_tile(const Request &r, const VariantRow &row);
std::string limit_conv2d_sliding_kernel(const Request &r, const VariantRow &row);
std::string limit_tensor_core_kernel(const Request &r, const VariantRow &row);
std::string limit_autoscheduled_scratch(const Request &r, const VariantRow &row);
std::string limit_fft_tile(const Request &r, const VariantRow &row);
std::string limit_cufft_kernel(const Request &r, const VariantRow &row);
// The CUDA libraries opened on first use (halconv.h, CudaLibraryInfo): refused where missing.
std::string limit_cufft_library(const Request &r, const VariantRow &row);
std::string limit_cublas_for_f32(const Request &r, const VariantRow &row);

// The FFT's relative cost of transform size `tile` for a request (its work, in units of
// T^2 log2 T per pair of tiles; infinity when the kernel does not fit the tile).
double fft_tile_cost(int tile, const Request &r);

}  // namespace halconv::internal
