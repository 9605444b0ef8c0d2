// Public entry points: validation, choice of device and algorithm, and the call into
// the AOT pipeline.
#include <algorithm>
#include <cmath>
#include <limits>

#include "halconv/float16.h"
#include "internal.h"

namespace halconv {

using internal::check_buffer;
using internal::check_call;
using internal::Conv2dVariant;
using internal::finish_cpu;
using internal::mode_offset;
using internal::prepare_cpu;
using internal::prepare_gpu;
using internal::resolve_device;
using internal::SeparableVariant;
using internal::shape_text;

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
    switch (algorithm) {
        case Algorithm::automatic:
            return "auto";
        case Algorithm::naive:
            return "naive";
        case Algorithm::shared_tiled:
            return "shared_tiled";
        case Algorithm::separable:
            return "separable";
        case Algorithm::autoscheduled:
            return "autoscheduled";
        case Algorithm::im2tensor:
            return "im2tensor";
        case Algorithm::im2tensor_fused:
            return "im2tensor_fused";
        case Algorithm::im2tensor_atomic:
            return "im2tensor_atomic";
        case Algorithm::diagonal_unroll:
            return "diagonal_unroll";
    }
    return "?";
}

const char *to_string(TensorCoreShape shape) {
    switch (shape) {
        case TensorCoreShape::m16n16k16:
            return "m16n16k16";
        case TensorCoreShape::m32n8k16:
            return "m32n8k16";
    }
    return "?";
}

const char *to_string(Staging staging) {
    switch (staging) {
        case Staging::fused:
            return "fused";
        case Staging::staged:
            return "staged";
    }
    return "?";
}

bool uses_tensor_cores(Algorithm algorithm) {
    return algorithm == Algorithm::im2tensor || algorithm == Algorithm::im2tensor_fused ||
           algorithm == Algorithm::im2tensor_atomic || algorithm == Algorithm::diagonal_unroll;
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

namespace {

void check_options(const Options &o) {
    if (static_cast<uint32_t>(o.mode) > 2) {
        throw Error("unknown mode " + std::to_string(int(o.mode)) + "; allowed: valid, same, full");
    }
    internal::check_boundary(o.boundary);
    if (static_cast<uint32_t>(o.precision) > 3) {
        throw Error("unknown precision " + std::to_string(int(o.precision)) + "; allowed: f64, f32, f16, f16f32");
    }
    if (static_cast<uint32_t>(o.algorithm) > 8) {
        throw Error("unknown algorithm " + std::to_string(int(o.algorithm)) +
                    "; allowed: auto, naive, shared_tiled, separable, autoscheduled, im2tensor, im2tensor_fused, "
                    "im2tensor_atomic, diagonal_unroll");
    }
    if (static_cast<uint32_t>(o.tensor_core_shape) > 1) {
        throw Error("unknown tensor-core shape " + std::to_string(int(o.tensor_core_shape)) +
                    "; allowed: m16n16k16, m32n8k16");
    }
    internal::check_device(o.device);
}

void check_output(const halide_buffer_t *output, Extent2d expected, halide_type_t type, Precision precision) {
    check_buffer(output, "output", 2, type, precision);
    if (output->dim[0].extent != expected.width || output->dim[1].extent != expected.height) {
        throw Error("output is " + std::to_string(output->dim[0].extent) + " x " +
                    std::to_string(output->dim[1].extent) + " (width x height) but this mode needs " +
                    std::to_string(expected.width) + " x " + std::to_string(expected.height));
    }
}

// The pipelines take scalar offsets in absolute coordinates; buffers may have any mins.
struct Offsets {
    int x = 0;
    int y = 0;
};

Offsets pipeline_offsets(const halide_buffer_t *input, const halide_buffer_t *output, int kw, int kh, const Options &o,
                         bool flip) {
    return {mode_offset(kw, o.mode, flip) + output->dim[0].min - input->dim[0].min,
            mode_offset(kh, o.mode, flip) + output->dim[1].min - input->dim[1].min};
}

Conv2dVariant conv2d_variant(Device device, Algorithm algorithm) {
    const bool gpu = device == Device::cuda;
    switch (algorithm) {
        case Algorithm::naive:
            return gpu ? Conv2dVariant::gpu_naive : Conv2dVariant::cpu_naive;
        case Algorithm::autoscheduled:
            return gpu ? Conv2dVariant::gpu_auto : Conv2dVariant::cpu_auto;
        default:
            return gpu ? Conv2dVariant::gpu_shared_tiled : Conv2dVariant::cpu_tiled;
    }
}

bool gpu_separable_fits(int kw, int kh, Precision precision) {
    const internal::PrecisionTypes t = internal::types_of(precision);
    const int acc_bytes = precision == Precision::f16 ? 2 : (precision == Precision::f64 ? 8 : 4);
    return internal::fits_shared_tile(kw, kh, t.storage.bytes(), gpu_tile_width * acc_bytes);
}

Halide::Runtime::Buffer<> storage_vector(const std::vector<double> &values, Precision precision) {
    const internal::PrecisionTypes t = internal::types_of(precision);
    Halide::Runtime::Buffer<> b(t.storage, static_cast<int>(values.size()));
    for (size_t i = 0; i < values.size(); i++) {
        void *p = b.raw_buffer()->host + i * t.storage.bytes();
        if (precision == Precision::f64) {
            *static_cast<double *>(p) = values[i];
        } else if (precision == Precision::f32) {
            *static_cast<float *>(p) = static_cast<float>(values[i]);
        } else {
            *static_cast<uint16_t *>(p) = float16_bits_from_double(values[i]);
        }
    }
    b.set_host_dirty();
    return b;
}

Dispatch run_separable(halide_buffer_t *input, halide_buffer_t *row, halide_buffer_t *col, halide_buffer_t *output,
                       const Options &o, bool flip, Device device, Offsets off) {
    const bool gpu = device == Device::cuda;
    const int kw = row->dim[0].extent, kh = col->dim[0].extent;
    SeparableVariant variant = SeparableVariant::cpu_separable;
    if (gpu) {
        variant = gpu_separable_fits(kw, kh, o.precision) ? SeparableVariant::gpu_separable
                                                          : SeparableVariant::gpu_separable_two_pass;
    } else if (kh - 1 > cpu_separable_strip_rows) {
        variant = SeparableVariant::cpu_separable_two_pass;
    }
    const internal::SeparableFn fn = internal::separable_pipeline(o.precision, variant);
    internal::run_pipeline(device, {input, row, col}, output, o.stream, "separable pipeline", [&] {
        return fn(input, row, col, static_cast<int32_t>(o.boundary), o.fill_value, off.x, off.y, flip, output);
    });
    return {device, Algorithm::separable};
}

// The output definition holds for any coordinates, so an autoscheduled pipeline can
// compute a larger region with the same origin, of which the output is the corner.
void run_autoscheduled_via_scratch(internal::Conv2dFn fn, halide_buffer_t *input, halide_buffer_t *kernel,
                                   halide_buffer_t *output, const Options &o, bool flip, Offsets off, bool gpu) {
    Halide::Runtime::Buffer<> scratch(output->type, std::max(output->dim[0].extent, autoscheduled_min_extent),
                                      std::max(output->dim[1].extent, autoscheduled_min_extent));
    scratch.translate({output->dim[0].min, output->dim[1].min});
    // Cropped only after the pipeline ran: a crop taken before would not see the device
    // allocation the pipeline adds to the scratch.
    const auto corner = [&] {
        return scratch.cropped(
            {{output->dim[0].min, output->dim[0].extent}, {output->dim[1].min, output->dim[1].extent}});
    };
    if (gpu) {
        prepare_gpu({input, kernel}, output);
        internal::StreamScope scope(o.stream);
        check_call(
            fn(input, kernel, static_cast<int32_t>(o.boundary), o.fill_value, off.x, off.y, flip, scratch.raw_buffer()),
            "conv2d pipeline");
        // Halide's device copy runs on the legacy default stream, unordered with a
        // non-blocking caller stream: wait for the pipeline first.
        internal::synchronize_stream(o.stream);
        check_call(halide_buffer_copy(nullptr, corner().raw_buffer(), internal::cuda_device_interface(), output),
                   "copy from the autoscheduled scratch");
    } else {
        prepare_cpu({input, kernel}, output);
        check_call(
            fn(input, kernel, static_cast<int32_t>(o.boundary), o.fill_value, off.x, off.y, flip, scratch.raw_buffer()),
            "conv2d pipeline");
        check_call(halide_buffer_copy(nullptr, corner().raw_buffer(), nullptr, output),
                   "copy from the autoscheduled scratch");
        finish_cpu(output);
    }
}

internal::TensorCoreVariant tensor_core_variant(const Options &o) {
    switch (o.algorithm) {
        case Algorithm::im2tensor:
            return internal::TensorCoreVariant::im2tensor;
        case Algorithm::im2tensor_atomic:
            return internal::TensorCoreVariant::im2tensor_atomic;
        case Algorithm::diagonal_unroll:
            return o.tensor_core_shape == TensorCoreShape::m32n8k16 ? internal::TensorCoreVariant::dki_m32n8k16
                                                                    : internal::TensorCoreVariant::dki_m16n16k16;
        default:
            return internal::TensorCoreVariant::im2tensor_fused;
    }
}

// Checks the tensor-core algorithms' limits before anything runs.
void check_tensor_core_request(const Options &o, int kw, int kh) {
    const char *name = to_string(o.algorithm);
    if (o.precision != Precision::f16 && o.precision != Precision::f16f32) {
        throw Error(std::string("algorithm ") + name +
                    " runs on tensor cores, which take float16 operands: "
                    "precision must be f16 or f16f32, not " +
                    to_string(o.precision) +
                    " (convert the image and kernel to float16, or use naive, shared_tiled or autoscheduled)");
    }
    if (o.device == Device::cpu) {
        throw Error(std::string("algorithm ") + name +
                    " runs on CUDA tensor cores only; use device cuda (or auto), or naive, shared_tiled, separable "
                    "or autoscheduled on the CPU");
    }
    if (!cuda_available()) {
        throw Error(std::string("algorithm ") + name +
                    " needs a CUDA device (tensor cores) and none is usable here; use naive, shared_tiled, "
                    "separable or autoscheduled on the CPU");
    }
    if (kw > tensor_core_max_kernel || kh > tensor_core_max_kernel) {
        throw Error(std::string("kernel ") + shape_text(kw, kh) + " is too large for algorithm " + name +
                    "; the tensor-core kernels take up to " + std::to_string(tensor_core_max_kernel) + " x " +
                    std::to_string(tensor_core_max_kernel) + " (use naive, or shared_tiled / autoscheduled)");
    }
}

Dispatch run_tensor_core(halide_buffer_t *input, halide_buffer_t *kernel, halide_buffer_t *output, const Options &o,
                         bool flip, Offsets off) {
    const internal::TensorCoreVariant variant = tensor_core_variant(o);
    internal::run_pipeline(Device::cuda, {input, kernel}, output, o.stream, "tensor-core pipeline", [&] {
        if (o.mode == Mode::valid) {
            // The extern stage reads the image from the output's min.
            const internal::TensorCoreValidFn fn = internal::tensor_core_valid_pipeline(o.precision, variant);
            return internal::with_output_at_image_mins(
                input, output, [&](halide_buffer_t *placed) { return fn(input, kernel, flip, placed); });
        }
        return internal::tensor_core_pipeline(o.precision, variant)(input, kernel, static_cast<int32_t>(o.boundary),
                                                                    o.fill_value, off.x, off.y, flip, output);
    });
    return {Device::cuda, o.algorithm};
}

}  // namespace

Extent2d output_extent(Extent2d image, Extent2d kernel, Mode mode) {
    if (image.width <= 0 || image.height <= 0 || kernel.width <= 0 || kernel.height <= 0) {
        throw Error("image " + shape_text(image.width, image.height) + " and kernel " +
                    shape_text(kernel.width, kernel.height) + " must both be non-empty");
    }
    switch (mode) {
        case Mode::valid:
            if (kernel.width > image.width || kernel.height > image.height) {
                throw Error("kernel " + shape_text(kernel.width, kernel.height) + " is larger than image " +
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
                throw Error("full output would exceed 2^31-1 samples per axis");
            }
            return {static_cast<int>(w), static_cast<int>(h)};
        }
    }
    throw Error("unknown mode " + std::to_string(int(mode)) + "; allowed: valid, same, full");
}

std::vector<double> gaussian_taps(double sigma, int size) {
    if (!std::isfinite(sigma) || sigma <= 0) {
        throw Error("Gaussian sigma " + std::to_string(sigma) + ": allowed a finite number > 0");
    }
    const double automatic_size = 2 * std::ceil(3 * sigma) + 1;
    if (size == 0 && automatic_size > max_gaussian_taps) {
        throw Error("Gaussian sigma " + std::to_string(sigma) + " needs " + std::to_string(automatic_size) +
                    " taps (2 ceil(3 sigma) + 1); allowed up to " + std::to_string(max_gaussian_taps) +
                    ", i.e. sigma <= " + std::to_string((max_gaussian_taps - 1) / 6));
    }
    const int n = size == 0 ? static_cast<int>(automatic_size) : size;
    if (n < 1 || n % 2 == 0 || n > max_gaussian_taps) {
        throw Error("Gaussian size " + std::to_string(size) + ": allowed an odd number from 1 to " +
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

Dispatch gaussian_blur(halide_buffer_t *input, halide_buffer_t *output, double sigma, int size, const Options &o) {
    check_options(o);
    const std::vector<double> taps = gaussian_taps(sigma, size);
    Halide::Runtime::Buffer<> row = storage_vector(taps, o.precision);
    Halide::Runtime::Buffer<> col = storage_vector(taps, o.precision);
    return correlate_separable(input, row.raw_buffer(), col.raw_buffer(), output, o, false);
}

Halide::Runtime::Buffer<> allocate_output(const halide_buffer_t *input, int kernel_width, int kernel_height,
                                          const Options &options) {
    check_options(options);
    const internal::PrecisionTypes t = internal::types_of(options.precision);
    check_buffer(input, "image", 2, t.storage, options.precision);
    const Extent2d e =
        output_extent({input->dim[0].extent, input->dim[1].extent}, {kernel_width, kernel_height}, options.mode);
    return Halide::Runtime::Buffer<>(t.output, e.width, e.height);
}

Dispatch correlate(halide_buffer_t *input, halide_buffer_t *kernel, halide_buffer_t *output, const Options &o,
                   bool flip) {
    check_options(o);
    const internal::PrecisionTypes t = internal::types_of(o.precision);
    check_buffer(input, "image", 2, t.storage, o.precision);
    check_buffer(kernel, "kernel", 2, t.storage, o.precision);
    const int kw = kernel->dim[0].extent, kh = kernel->dim[1].extent;
    const Extent2d expected = output_extent({input->dim[0].extent, input->dim[1].extent}, {kw, kh}, o.mode);
    check_output(output, expected, t.output, o.precision);
    const Halide::Runtime::Buffer<double> values = internal::finite_host_values(kernel, "kernel");
    if (uses_tensor_cores(o.algorithm)) {
        check_tensor_core_request(o, kw, kh);
        return run_tensor_core(input, kernel, output, o, flip, pipeline_offsets(input, output, kw, kh, o, flip));
    }
    const Device device = resolve_device(o.device);
    const bool gpu = device == Device::cuda;

    Algorithm algorithm = o.algorithm;
    std::vector<double> row, col;
    if (algorithm == Algorithm::automatic || algorithm == Algorithm::separable) {
        const double residual = internal::rank1_factorize(values, &row, &col);
        const bool rank1 = residual <= rank1_tolerance(o.precision);
        if (algorithm == Algorithm::separable && !rank1) {
            throw Error(
                "algorithm separable needs a rank-1 kernel, but the best rank-1 approximation leaves a "
                "relative residual of " +
                std::to_string(residual) + " (tolerance " + std::to_string(rank1_tolerance(o.precision)) + " for " +
                to_string(o.precision) +
                "); use naive, shared_tiled, autoscheduled or auto, or the separable entry point");
        }
        if (rank1 && kw * kh > 1) {
            Halide::Runtime::Buffer<> row_buf = storage_vector(row, o.precision);
            Halide::Runtime::Buffer<> col_buf = storage_vector(col, o.precision);
            return run_separable(input, row_buf.raw_buffer(), col_buf.raw_buffer(), output, o, flip, device,
                                 pipeline_offsets(input, output, kw, kh, o, flip));
        }
        algorithm = Algorithm::shared_tiled;
        if (gpu && !internal::fits_shared_tile(kw, kh, t.storage.bytes(), 0)) {
            algorithm = Algorithm::naive;
        }
    } else if (gpu && algorithm == Algorithm::shared_tiled &&
               !internal::fits_shared_tile(kw, kh, t.storage.bytes(), 0)) {
        throw Error("kernel " + shape_text(kw, kh) + " is too large for the GPU shared_tiled tile at precision " +
                    to_string(o.precision) + ": the " + std::to_string(gpu_tile_width) + " x " +
                    std::to_string(gpu_tile_height) + " tile plus apron must fit " +
                    std::to_string(gpu_shared_budget_bytes) + " bytes; use naive or autoscheduled");
    }

    const Offsets off = pipeline_offsets(input, output, kw, kh, o, flip);
    const internal::Conv2dFn fn = internal::conv2d_pipeline(o.precision, conv2d_variant(device, algorithm));
    internal::install_runtime_hooks();
    const bool small =
        output->dim[0].extent < autoscheduled_min_extent || output->dim[1].extent < autoscheduled_min_extent;
    if (algorithm == Algorithm::autoscheduled && small) {
        run_autoscheduled_via_scratch(fn, input, kernel, output, o, flip, off, gpu);
        return {device, algorithm};
    }
    internal::run_pipeline(device, {input, kernel}, output, o.stream, "conv2d pipeline", [&] {
        return fn(input, kernel, static_cast<int32_t>(o.boundary), o.fill_value, off.x, off.y, flip, output);
    });
    return {device, algorithm};
}

Dispatch correlate_separable(halide_buffer_t *input, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel,
                             halide_buffer_t *output, const Options &o, bool flip) {
    check_options(o);
    const internal::PrecisionTypes t = internal::types_of(o.precision);
    check_buffer(input, "image", 2, t.storage, o.precision);
    check_buffer(row_kernel, "row kernel", 1, t.storage, o.precision);
    check_buffer(col_kernel, "column kernel", 1, t.storage, o.precision);
    const int kw = row_kernel->dim[0].extent, kh = col_kernel->dim[0].extent;
    const Extent2d expected = output_extent({input->dim[0].extent, input->dim[1].extent}, {kw, kh}, o.mode);
    check_output(output, expected, t.output, o.precision);
    internal::check_finite_host_values(row_kernel, "row kernel");
    internal::check_finite_host_values(col_kernel, "column kernel");
    const Device device = resolve_device(o.device);
    return run_separable(input, row_kernel, col_kernel, output, o, flip, device,
                         pipeline_offsets(input, output, kw, kh, o, flip));
}

}  // namespace detail
}  // namespace halconv
