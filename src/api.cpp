// Public entry points: validation, choice of device and algorithm, and the call into
// the AOT pipeline.
#include <algorithm>
#include <cmath>
#include <limits>

#include "internal.h"
#include "registry.h"

namespace halconv {

using internal::check_buffer;
using internal::shape_text;

namespace {

// The output of `image` (2D, or a batch (x, y, n): then a batch of as many).
void check_output(const halide_buffer_t *output, const halide_buffer_t *image, Extent2d expected, halide_type_t type,
                  Precision precision) {
    if (image->dimensions == 3 && output != nullptr && output->dimensions != 3) {
        throw Error(ErrorCode::invalid_argument, "the image is a batch of " + std::to_string(image->dim[2].extent) +
                                                     " (x, y, n) but the output has " +
                                                     std::to_string(output->dimensions) +
                                                     " dimensions; a batch's output is a batch of as many");
    }
    check_buffer(output, "output", image->dimensions, internal::accepted_type(output, type), precision);
    if (image->dimensions == 3 && output->dim[2].extent != image->dim[2].extent) {
        throw Error(ErrorCode::invalid_argument, "the image is a batch of " + std::to_string(image->dim[2].extent) +
                                                     " but the output holds " + std::to_string(output->dim[2].extent));
    }
    if (output->dim[0].extent != expected.width || output->dim[1].extent != expected.height) {
        throw Error(ErrorCode::invalid_argument,
                    "output is " + shape_text(output->dim[0].extent, output->dim[1].extent) +
                        " (width x height) but this mode needs " + shape_text(expected.width, expected.height));
    }
}

}  // namespace

const char *to_string(Mode mode) {
    switch (mode) {
        case Mode::valid:
            return "valid";
        case Mode::same:
            return "same";
        case Mode::full:
            return "full";
    }
    return "?";
}

const char *to_string(Boundary boundary) {
    switch (boundary) {
        case Boundary::constant:
            return "constant";
        case Boundary::nearest:
            return "nearest";
        case Boundary::reflect:
            return "reflect";
        case Boundary::mirror:
            return "mirror";
        case Boundary::wrap:
            return "wrap";
    }
    return "?";
}

const char *to_string(Precision precision) {
    switch (precision) {
        case Precision::f64:
            return "f64";
        case Precision::f32:
            return "f32";
        case Precision::f16:
            return "f16";
        case Precision::f16f32:
            return "f16f32";
    }
    return "?";
}

const char *to_string(Algorithm algorithm) {
    return internal::algorithm_name(internal::Api::correlate2d, static_cast<int>(algorithm));
}

const char *to_string(Staging staging) {
    return internal::algorithm_name(internal::Api::edges, static_cast<int>(staging));
}

const char *to_string(MultichannelAlgorithm algorithm) {
    return internal::algorithm_name(internal::Api::multichannel, static_cast<int>(algorithm));
}

const char *to_string(BilateralAlgorithm algorithm) {
    return internal::algorithm_name(internal::Api::bilateral, static_cast<int>(algorithm));
}

const char *to_string(Operation operation) {
    switch (operation) {
        case Operation::correlate:
            return "correlate";
        case Operation::convolve:
            return "convolve";
    }
    return "?";
}

bool uses_tensor_cores(Algorithm algorithm) {
    for (const internal::VariantRow &row : internal::variant_rows()) {
        if (row.api == internal::Api::correlate2d && row.value == static_cast<int>(algorithm) && row.tensor_cores) {
            return true;
        }
    }
    return false;
}

const std::vector<AlgorithmInfo> &algorithms() {
    static const std::vector<AlgorithmInfo> list = [] {
        std::vector<AlgorithmInfo> out;
        const internal::ApiInfo &api = internal::api_info(internal::Api::correlate2d);
        for (size_t v = 1; v < api.algorithms.size(); v++) {
            AlgorithmInfo info;
            info.algorithm = static_cast<Algorithm>(v);
            info.name = api.algorithms[v];
            info.description = api.docs[v];
            bool any_kernel = false;  // a row without a rank limit
            for (const internal::VariantRow &row : internal::variant_rows()) {
                if (row.api != internal::Api::correlate2d || row.value != static_cast<int>(v)) {
                    continue;
                }
                if (std::find(info.devices.begin(), info.devices.end(), row.device) == info.devices.end()) {
                    info.devices.push_back(row.device);
                }
                for (Precision p : {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32}) {
                    if (row.supports(p) &&
                        std::find(info.precisions.begin(), info.precisions.end(), p) == info.precisions.end()) {
                        info.precisions.push_back(p);
                    }
                }
                info.tensor_cores = info.tensor_cores || row.tensor_cores;
                int row_rank = 0;
                for (internal::Limit limit : row.limits) {
                    row_rank = limit == internal::limit_rank1      ? 1
                               : limit == internal::limit_low_rank ? max_low_rank
                                                                   : row_rank;
                }
                any_kernel = any_kernel || row_rank == 0;
                info.max_kernel_rank = std::max(info.max_kernel_rank, row_rank);
                info.variants.push_back(row.name());
            }
            if (any_kernel) {
                info.max_kernel_rank = 0;
            }
            std::sort(info.precisions.begin(), info.precisions.end());
            out.push_back(info);
        }
        return out;
    }();
    return list;
}

std::optional<Algorithm> algorithm_named(std::string_view name) {
    if (const std::optional<int> v = internal::algorithm_value(internal::Api::correlate2d, name)) {
        return static_cast<Algorithm>(*v);
    }
    return std::nullopt;
}

const char *to_string(Device device) {
    switch (device) {
        case Device::automatic:
            return "auto";
        case Device::cpu:
            return "cpu";
        case Device::cuda:
            return "cuda";
    }
    return "?";
}

const char *to_string(Banding banding) {
    switch (banding) {
        case Banding::automatic:
            return "auto";
        case Banding::always:
            return "always";
        case Banding::never:
            return "never";
    }
    return "?";
}

Extent2d output_extent(Extent2d image, Extent2d kernel, Mode mode) {
    if (image.width <= 0 || image.height <= 0 || kernel.width <= 0 || kernel.height <= 0) {
        throw Error(ErrorCode::invalid_argument, "image " + shape_text(image.width, image.height) + " and kernel " +
                                                     shape_text(kernel.width, kernel.height) +
                                                     " must both be non-empty");
    }
    switch (mode) {
        case Mode::valid:
            if (kernel.width > image.width || kernel.height > image.height) {
                throw Error(ErrorCode::invalid_argument,
                            "kernel " + shape_text(kernel.width, kernel.height) + " is larger than image " +
                                shape_text(image.width, image.height) +
                                " in valid mode; valid needs the kernel to fit inside the image (use same or full)");
            }
            return {image.width - kernel.width + 1, image.height - kernel.height + 1};
        case Mode::same:
            return image;
        case Mode::full: {
            const long long w = (long long)image.width + kernel.width - 1;
            const long long h = (long long)image.height + kernel.height - 1;
            if (w > std::numeric_limits<int32_t>::max() || h > std::numeric_limits<int32_t>::max()) {
                throw Error(ErrorCode::invalid_argument, "full output would exceed 2^31-1 samples per axis");
            }
            return {static_cast<int>(w), static_cast<int>(h)};
        }
    }
    throw Error(ErrorCode::invalid_argument,
                "unknown mode " + std::to_string(int(mode)) + "; allowed: valid, same, full");
}

std::vector<double> gaussian_taps(double sigma, int size) {
    if (!std::isfinite(sigma) || sigma <= 0) {
        throw Error(ErrorCode::invalid_argument,
                    "Gaussian sigma " + std::to_string(sigma) + ": allowed a finite number > 0");
    }
    const double automatic_size = 2 * std::ceil(3 * sigma) + 1;
    if (size == 0 && automatic_size > max_gaussian_taps) {
        throw Error(ErrorCode::invalid_argument,
                    "Gaussian sigma " + std::to_string(sigma) + " needs " + std::to_string(automatic_size) +
                        " taps (2 ceil(3 sigma) + 1); allowed up to " + std::to_string(max_gaussian_taps) +
                        ", i.e. sigma <= " + std::to_string((max_gaussian_taps - 1) / 6));
    }
    const int n = size == 0 ? static_cast<int>(automatic_size) : size;
    if (n < 1 || n % 2 == 0 || n > max_gaussian_taps) {
        throw Error(ErrorCode::invalid_argument,
                    "Gaussian size " + std::to_string(size) + ": allowed an odd number from 1 to " +
                        std::to_string(max_gaussian_taps) + ", or 0 for 2 ceil(3 sigma) + 1");
    }
    std::vector<double> taps(static_cast<size_t>(n));
    double sum = 0.0;
    for (int i = 0; i < n; i++) {
        const double d = i - (n - 1) / 2;
        sum += taps[static_cast<size_t>(i)] = std::exp(-d * d / (2 * sigma * sigma));
    }
    for (double &t : taps) {
        t /= sum;
    }
    return taps;
}

namespace detail {

namespace {

// gaussian_blur as a one-shot plan of the image's extent; `how` is a size or a method.
template <typename How>
Dispatch blur_once(halide_buffer_t *input, halide_buffer_t *output, double sigma, How how, const Options &o) {
    internal::check_options(o);
    const internal::PrecisionTypes t = internal::types_of(o.precision);
    internal::check_image_buffer(input, "image", internal::accepted_type(input, t.storage), o.precision);
    const Plan plan = Plan::gaussian({input->dim[0].extent, input->dim[1].extent}, sigma, o, how);
    plan.run(input, output, o.stream);
    return plan.dispatch();
}

}  // namespace

Dispatch gaussian_blur(halide_buffer_t *input, halide_buffer_t *output, double sigma, int size, const Options &o) {
    return blur_once(input, output, sigma, size, o);
}

Dispatch gaussian_blur(halide_buffer_t *input, halide_buffer_t *output, double sigma, GaussianMethod method,
                       const Options &o) {
    return blur_once(input, output, sigma, method, o);
}

Halide::Runtime::Buffer<> allocate_output(const halide_buffer_t *input, int kernel_width, int kernel_height,
                                          const Options &options) {
    internal::check_options(options);
    const internal::PrecisionTypes t = internal::types_of(options.precision);
    internal::check_image_buffer(input, "image", internal::accepted_type(input, t.storage), options.precision);
    const Extent2d e =
        output_extent({input->dim[0].extent, input->dim[1].extent}, {kernel_width, kernel_height}, options.mode);
    if (input->dimensions == 3) {
        return internal::with_host_memory(
            Halide::Runtime::Buffer<>(t.output, nullptr, e.width, e.height, input->dim[2].extent));
    }
    return internal::with_host_memory(Halide::Runtime::Buffer<>(t.output, nullptr, e.width, e.height));
}

// The options of a one-shot call's plan: made for as many images as the call's image has.
Options for_images_of(const halide_buffer_t *input, const Options &o) {
    Options planned = o;
    if (input->dimensions == 3) {
        planned.batch_images = std::max(input->dim[2].extent, 1);
    }
    return planned;
}

// The one-shot calls: every check the plan and its apply make, in the order the calls
// always made them (image, kernel, output, then the kernel's values and the algorithm).
Dispatch correlate(halide_buffer_t *input, halide_buffer_t *kernel, halide_buffer_t *output, const Options &o,
                   Operation operation) {
    internal::check_options(o);
    const internal::PrecisionTypes t = internal::types_of(o.precision);
    internal::check_image_buffer(input, "image", internal::accepted_type(input, t.storage), o.precision);
    check_buffer(kernel, "kernel", 2, t.storage, o.precision);
    const Extent2d image{input->dim[0].extent, input->dim[1].extent};
    check_output(output, input, output_extent(image, {kernel->dim[0].extent, kernel->dim[1].extent}, o.mode), t.output,
                 o.precision);
    const Plan plan = Plan::create(image, kernel, for_images_of(input, o), operation);
    plan.run(input, output, o.stream);
    return plan.dispatch();
}

Dispatch correlate_separable(halide_buffer_t *input, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel,
                             halide_buffer_t *output, const Options &o, Operation operation) {
    internal::check_options(o);
    const internal::PrecisionTypes t = internal::types_of(o.precision);
    internal::check_image_buffer(input, "image", internal::accepted_type(input, t.storage), o.precision);
    check_buffer(row_kernel, "row kernel", 1, t.storage, o.precision);
    check_buffer(col_kernel, "column kernel", 1, t.storage, o.precision);
    const Extent2d image{input->dim[0].extent, input->dim[1].extent};
    check_output(output, input, output_extent(image, {row_kernel->dim[0].extent, col_kernel->dim[0].extent}, o.mode),
                 t.output, o.precision);
    const Plan plan = Plan::create_separable(image, row_kernel, col_kernel, for_images_of(input, o), operation);
    plan.run(input, output, o.stream);
    return plan.dispatch();
}

}  // namespace detail
}  // namespace halconv
