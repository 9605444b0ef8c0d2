// Multi-channel convolution: validation, choice of device and algorithm, and the call
// into the direct Halide pipelines or the GEMM extern stages (im2col, implicit).
#include <utility>

#include "internal.h"
#include "registry.h"

namespace halconv {

using internal::shape_text;

namespace {

void check_options(const MultichannelOptions &o) {
    internal::check_mode(o.mode);
    internal::check_boundary(o.boundary);
    internal::check_precision(o.precision);
    if (!internal::valid_algorithm(internal::Api::multichannel, static_cast<int>(o.algorithm))) {
        throw Error(ErrorCode::invalid_argument, "unknown multichannel algorithm " + std::to_string(int(o.algorithm)) +
                                                     "; allowed: auto, " +
                                                     internal::algorithm_list(internal::Api::multichannel));
    }
    internal::check_device(o.device);
}

// The image (c, x, y) and kernels (c, i, j, n): dimensions, types, matching channels.
// Returns the output extent (width, height) of the mode.
Extent2d check_inputs(const halide_buffer_t *image, const halide_buffer_t *kernels, const MultichannelOptions &o) {
    const internal::PrecisionTypes t = internal::types_of(o.precision);
    internal::check_buffer(image, "image (c, x, y)", 3, t.storage, o.precision);
    internal::check_buffer(kernels, "kernels (c, i, j, n)", 4, t.storage, o.precision);
    if (image->dim[0].extent != kernels->dim[0].extent) {
        throw Error(ErrorCode::invalid_argument, "image has " + std::to_string(image->dim[0].extent) +
                                                     " channels but the kernels have " +
                                                     std::to_string(kernels->dim[0].extent) +
                                                     "; dimension 0 of both (the channel) must have the same extent");
    }
    return output_extent({image->dim[1].extent, image->dim[2].extent}, {kernels->dim[1].extent, kernels->dim[2].extent},
                         o.mode);
}

// Why the algorithm's registry row refuses the request (its limits: im2col's float32 GEMM
// needs cuBLAS), "" when it runs it.
std::string row_refusal(MultichannelAlgorithm algorithm, const MultichannelOptions &o, Device device) {
    const std::vector<const internal::VariantRow *> rows =
        internal::rows_of(internal::Api::multichannel, static_cast<int>(algorithm), device);
    if (rows.empty()) {
        return {};  // the device checks below say why
    }
    return rows.front()->refusal({.device = device, .precision = o.precision, .mode = o.mode, .boundary = o.boundary});
}

MultichannelAlgorithm resolve_algorithm(const MultichannelOptions &o, Device device) {
    if (o.algorithm == MultichannelAlgorithm::automatic) {
        if (device != Device::cuda || o.precision == Precision::f64) {
            return MultichannelAlgorithm::direct;
        }
        const MultichannelAlgorithm gemm =
            o.precision == Precision::f32 ? MultichannelAlgorithm::im2col : MultichannelAlgorithm::implicit_gemm;
        return row_refusal(gemm, o, device).empty() ? gemm : MultichannelAlgorithm::direct;
    }
    const char *name = to_string(o.algorithm);
    if (o.algorithm == MultichannelAlgorithm::im2col && o.precision == Precision::f64) {
        throw Error(ErrorCode::unsupported,
                    "multichannel algorithm im2col has no f64 GEMM; use precision f32, f16 or f16f32, or "
                    "algorithm direct for f64");
    }
    if (o.algorithm == MultichannelAlgorithm::implicit_gemm &&
        (o.precision == Precision::f64 || o.precision == Precision::f32)) {
        throw Error(
            ErrorCode::unsupported,
            std::string("multichannel algorithm implicit_gemm multiplies float16 on tensor cores; use precision "
                        "f16 or f16f32, or algorithm im2col (f32) or direct (f64), not ") +
                to_string(o.precision));
    }
    if (o.algorithm != MultichannelAlgorithm::direct && device != Device::cuda) {
        throw Error(ErrorCode::unsupported,
                    std::string("multichannel algorithm ") + name +
                        " runs on CUDA only; use device cuda (or auto with a GPU), or algorithm direct on the CPU" +
                        (internal::cuda_built() ? "" : " (" + internal::cuda_unavailable_reason() + ")"));
    }
    if (std::string why = row_refusal(o.algorithm, o, device); !why.empty()) {
        throw Error(ErrorCode::unsupported, "multichannel " + why);
    }
    return o.algorithm;
}

}  // namespace

namespace detail {

Halide::Runtime::Buffer<> allocate_multichannel_output(const halide_buffer_t *image, const halide_buffer_t *kernels,
                                                       const MultichannelOptions &options) {
    check_options(options);
    const Extent2d e = check_inputs(image, kernels, options);
    return internal::with_host_memory(Halide::Runtime::Buffer<>(internal::types_of(options.precision).output, nullptr,
                                                                kernels->dim[3].extent, e.width, e.height));
}

MultichannelDispatch correlate_multichannel(halide_buffer_t *image, halide_buffer_t *kernels, halide_buffer_t *output,
                                            const MultichannelOptions &o, bool flip) {
    check_options(o);
    const Extent2d e = check_inputs(image, kernels, o);
    const internal::PrecisionTypes t = internal::types_of(o.precision);
    internal::check_buffer(output, "output (n, x, y)", 3, t.output, o.precision);
    const int filters = kernels->dim[3].extent;
    if (output->dim[0].extent != filters || output->dim[1].extent != e.width || output->dim[2].extent != e.height) {
        throw Error(ErrorCode::invalid_argument, "output is " + std::to_string(output->dim[0].extent) + " x " +
                                                     shape_text(output->dim[1].extent, output->dim[2].extent) +
                                                     " (n x width x height) but " + std::to_string(filters) +
                                                     " kernels in this mode need " + std::to_string(filters) + " x " +
                                                     shape_text(e.width, e.height));
    }
    internal::check_finite_host_values(kernels, "kernels");
    const Device device = internal::resolve_device(o.device);
    const MultichannelAlgorithm algorithm = resolve_algorithm(o, device);
    const int kw = kernels->dim[1].extent, kh = kernels->dim[2].extent;
    for (const auto &[buf, role] :
         {std::pair<const halide_buffer_t *, const char *>{image, "image"}, {kernels, "kernels"}, {output, "output"}}) {
        if (buf->dim[0].stride != 1) {
            throw Error(ErrorCode::invalid_argument,
                        std::string(role) + " has dimension 0 stride " + std::to_string(buf->dim[0].stride) +
                            "; multichannel buffers keep channels innermost (dimension 0 stride 1)");
        }
    }
    internal::check_no_overlap(image, "image", output, "output");
    // Output channel n is kernel n: the pipelines see the output's channels from the
    // kernels' first one. Offsets place the output as correlate2d does, in absolute coordinates.
    const int off_x = internal::mode_offset(kw, o.mode, flip) + output->dim[1].min - image->dim[1].min;
    const int off_y = internal::mode_offset(kh, o.mode, flip) + output->dim[2].min - image->dim[2].min;
    const int n0 = kernels->dim[3].min;
    internal::run_pipeline(device, {image, kernels}, output, o.stream, "multichannel pipeline", [&] {
        const internal::PipelineFns &fns =
            internal::rows_of(internal::Api::multichannel, static_cast<int>(algorithm), device)
                .front()
                ->fns(o.precision);
        if (algorithm == MultichannelAlgorithm::direct) {
            const internal::Kernel2dFn fn = fns.kernel2d;
            return internal::with_output_mins(output, {n0, output->dim[1].min, output->dim[2].min},
                                              [&](halide_buffer_t *placed) {
                                                  return fn(image, kernels, static_cast<int32_t>(o.boundary),
                                                            o.fill_value, off_x, off_y, flip, placed);
                                              });
        }
        if (o.mode == Mode::valid) {
            // The extern stage reads the image from the output's min.
            const internal::ValidFn fn = fns.valid;
            return internal::with_output_mins(
                output, {n0, image->dim[1].min, image->dim[2].min},
                [&](halide_buffer_t *placed) { return fn(image, kernels, flip, placed); });
        }
        const internal::Kernel2dFn fn = fns.kernel2d;
        return internal::with_output_mins(
            output, {n0, output->dim[1].min, output->dim[2].min}, [&](halide_buffer_t *placed) {
                return fn(image, kernels, static_cast<int32_t>(o.boundary), o.fill_value, off_x, off_y, flip, placed);
            });
    });
    return {device, algorithm};
}

}  // namespace detail
}  // namespace halconv
