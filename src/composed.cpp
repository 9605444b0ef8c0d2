// Entry points of the composed pipelines: edge detection and the unsharp mask.
#include <cmath>
#include <vector>

#include "geometry.h"
#include "halconv/float16.h"
#include "internal.h"
#include "registry.h"

namespace halconv {

using internal::shape_text;

namespace {

void check_pipeline_options(const PipelineOptions &o) {
    internal::check_boundary(o.boundary);
    internal::check_device(o.device);
    if (!internal::valid_algorithm(internal::Api::edges, static_cast<int>(o.staging))) {
        throw Error(ErrorCode::invalid_argument, "unknown staging " + std::to_string(int(o.staging)) +
                                                     "; allowed: " + internal::algorithm_list(internal::Api::edges));
    }
}

// Throws unless buf is a non-empty 2D buffer of `type`.
void check_image(const halide_buffer_t *buf, const char *role, halide_type_t type, const char *type_text) {
    if (buf == nullptr || buf->dimensions != 2 || buf->type != type) {
        throw Error(ErrorCode::invalid_argument, std::string(role) + " must be a 2D " + type_text + " buffer");
    }
    if (buf->dim[0].extent <= 0 || buf->dim[1].extent <= 0) {
        throw Error(ErrorCode::invalid_argument,
                    std::string(role) + " is empty (" + shape_text(buf->dim[0].extent, buf->dim[1].extent) + ")");
    }
    if (buf->host == nullptr && buf->device == 0) {
        throw Error(ErrorCode::invalid_argument, std::string(role) + " has neither host nor device memory");
    }
    internal::check_unit_stride(buf, role);
}

void check_same_extent(const halide_buffer_t *image, const halide_buffer_t *output, const char *role) {
    if (output->dim[0].extent != image->dim[0].extent || output->dim[1].extent != image->dim[1].extent) {
        throw Error(ErrorCode::invalid_argument, std::string(role) + " is " +
                                                     shape_text(output->dim[0].extent, output->dim[1].extent) +
                                                     " (width x height) but must be the image's " +
                                                     shape_text(image->dim[0].extent, image->dim[1].extent));
    }
}

// The GPU schedules' width limit (geometry.h) for an image filtered with a kernel
// `kernel_width` wide.
void check_gpu_width(Device device, const halide_buffer_t *image, int kernel_width, const char *pipeline) {
    if (device == Device::cuda && !gpu_grid_fits_width(image->dim[0].extent, kernel_width)) {
        throw Error(ErrorCode::unsupported, std::string(pipeline) + " on CUDA takes images up to " +
                                                std::to_string(gpu_max_width - kernel_width + 1) +
                                                " samples wide (CUDA's grid limit); this image is " +
                                                std::to_string(image->dim[0].extent) + " wide (run it on the CPU)");
    }
}

}  // namespace

namespace detail {

Device detect_edges(halide_buffer_t *image, halide_buffer_t *edges, double threshold, const PipelineOptions &o) {
    check_pipeline_options(o);
    check_image(image, "image", halide_type_of<float>(), "float32");
    check_image(edges, "edges", halide_type_of<uint8_t>(), "uint8");
    internal::check_no_overlap(image, "image", edges, "edges");
    check_same_extent(image, edges, "edges");
    if (!std::isfinite(threshold) || threshold < 0) {
        throw Error(ErrorCode::invalid_argument,
                    "edge threshold " + std::to_string(threshold) + ": allowed a finite number >= 0");
    }
    const Device device = internal::resolve_device(o.device);
    check_gpu_width(device, image, 7, "the edge pipeline");  // a 5 x 5 Gaussian, then a 3 x 3 Laplacian
    const internal::EdgesFn fn =
        internal::rows_of(internal::Api::edges, static_cast<int>(o.staging), device).front()->fns(Precision::f32).edges;
    internal::run_pipeline(device, {image}, edges, o.stream, "edge-detection pipeline", [&] {
        return internal::with_output_at_image_mins(image, edges, [&](halide_buffer_t *out) {
            return fn(image, static_cast<int32_t>(o.boundary), static_cast<float>(o.fill_value),
                      static_cast<float>(threshold), out);
        });
    });
    return device;
}

Device unsharp_mask(halide_buffer_t *image, halide_buffer_t *blur_kernel, halide_buffer_t *output, double amount,
                    const PipelineOptions &o) {
    check_pipeline_options(o);
    check_image(image, "image", halide_type_of<float>(), "float32");
    check_image(blur_kernel, "blur kernel", halide_type_of<float>(), "float32");
    check_image(output, "output", halide_type_of<float>(), "float32");
    internal::check_no_overlap(image, "image", output, "output");
    check_same_extent(image, output, "output");
    if (!std::isfinite(amount)) {
        throw Error(ErrorCode::invalid_argument, "unsharp amount must be finite");
    }
    const int kw = blur_kernel->dim[0].extent, kh = blur_kernel->dim[1].extent;
    const Device device = internal::resolve_device(o.device);
    if (device == Device::cuda && (kw > tensor_core_max_kernel || kh > tensor_core_max_kernel)) {
        throw Error(ErrorCode::unsupported,
                    "blur kernel " + shape_text(kw, kh) + " is too large for the tensor-core blur; allowed up to " +
                        shape_text(tensor_core_max_kernel, tensor_core_max_kernel) + " on device cuda");
    }
    // The blur takes float16 operands: the kernel is rounded once here.
    const Halide::Runtime::Buffer<double> values = internal::finite_host_values(blur_kernel, "blur kernel");
    Halide::Runtime::Buffer<> kernel16 =
        internal::with_host_memory(Halide::Runtime::Buffer<>(halide_type_t(halide_type_float, 16), nullptr, kw, kh));
    uint16_t *bits = static_cast<uint16_t *>(kernel16.data());
    for (int y = 0; y < kh; y++) {
        for (int x = 0; x < kw; x++) {
            const double v = values(values.dim(0).min() + x, values.dim(1).min() + y);
            if (std::abs(v) > 65504.0) {
                throw Error(ErrorCode::invalid_argument,
                            "blur kernel value " + std::to_string(v) + " is outside the float16 range (|v| <= 65504)");
            }
            bits[size_t(y) * size_t(kw) + size_t(x)] = float16_bits_from_double(v);
        }
    }
    kernel16.set_host_dirty();
    const int ox = internal::mode_offset(kw, Mode::same, false), oy = internal::mode_offset(kh, Mode::same, false);
    check_gpu_width(device, image, kw, "the unsharp-mask pipeline");
    const internal::VariantRow &row =
        *internal::rows_of(internal::Api::unsharp, internal::algorithms_on(internal::Api::unsharp, device).front(),
                           device)
             .front();
    const internal::UnsharpFn fn = row.fns(Precision::f32).unsharp;
    internal::run_pipeline(device, {image, kernel16.raw_buffer()}, output, o.stream, "unsharp-mask pipeline", [&] {
        return internal::with_output_at_image_mins(image, output, [&](halide_buffer_t *out) {
            return fn(image, kernel16.raw_buffer(), static_cast<int32_t>(o.boundary), static_cast<float>(o.fill_value),
                      ox, oy, static_cast<float>(amount), out);
        });
    });
    return device;
}

}  // namespace detail
}  // namespace halconv
