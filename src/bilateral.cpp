// The bilateral filter: validation, the radius, the registry row for the device, the call.
#include <algorithm>
#include <cmath>
#include <string>

#include "internal.h"
#include "registry.h"

namespace halconv::detail {

BilateralDispatch bilateral_filter(halide_buffer_t *image, halide_buffer_t *output, double sigma_spatial,
                                   double sigma_range, int radius, const BilateralOptions &o) {
    internal::check_boundary(o.boundary);
    internal::check_precision(o.precision);
    internal::check_device(o.device);
    if (!internal::valid_algorithm(internal::Api::bilateral, static_cast<int>(o.algorithm))) {
        throw Error(ErrorCode::invalid_argument, "unknown bilateral algorithm " + std::to_string(int(o.algorithm)) +
                                                     "; allowed: auto, " +
                                                     internal::algorithm_list(internal::Api::bilateral));
    }
    for (const auto &[value, name] :
         {std::pair{sigma_spatial, "sigma_spatial"}, std::pair{sigma_range, "sigma_range"}}) {
        if (!(std::isfinite(value) && value > 0)) {
            throw Error(ErrorCode::invalid_argument,
                        std::string("bilateral ") + name + " is " + std::to_string(value) + "; allowed: finite, > 0");
        }
    }
    const internal::PrecisionTypes t = internal::types_of(o.precision);
    internal::check_buffer(image, "image", 2, t.storage, o.precision);
    internal::check_buffer(output, "output", 2, t.output, o.precision);
    internal::check_unit_stride(image, "image");
    internal::check_unit_stride(output, "output");
    internal::check_no_overlap(image, "image", output, "output");
    const int w = image->dim[0].extent, h = image->dim[1].extent;
    if (output->dim[0].extent != w || output->dim[1].extent != h) {
        throw Error(ErrorCode::invalid_argument,
                    "output is " + internal::shape_text(output->dim[0].extent, output->dim[1].extent) +
                        " (width x height) but must be the image's " + internal::shape_text(w, h));
    }
    const int widest = std::max(w, h) - 1;
    if (radius < 0 || radius > widest) {
        throw Error(ErrorCode::invalid_argument,
                    "bilateral radius " + std::to_string(radius) + " for a " + internal::shape_text(w, h) +
                        " image; allowed: 0 (chosen from sigma_spatial) to " + std::to_string(widest) +
                        " (a larger window reaches past the image's own extent on every side)");
    }
    if (radius == 0) {
        radius = int(std::min<double>(std::ceil(3.0 * sigma_spatial), widest));
    }
    const internal::Request r{.device = internal::resolve_device(o.device),
                              .precision = o.precision,
                              .mode = Mode::same,
                              .boundary = o.boundary,
                              .kernel_width = 2 * radius + 1,
                              .kernel_height = 2 * radius + 1,
                              .output_width = w,
                              .output_height = h};
    const int value = o.algorithm == BilateralAlgorithm::automatic
                          ? internal::algorithms_on(internal::Api::bilateral, r.device).front()
                          : static_cast<int>(o.algorithm);
    const std::vector<const internal::VariantRow *> rows = internal::rows_of(internal::Api::bilateral, value, r.device);
    std::string why = std::string("bilateral algorithm ") + internal::algorithm_name(internal::Api::bilateral, value) +
                      " has no variant on device " + to_string(r.device);
    for (const internal::VariantRow *row : rows) {
        if (std::string refusal = row->refusal(r); !refusal.empty()) {
            why = refusal;
            continue;
        }
        const internal::BilateralFn fn = row->fns(o.precision).bilateral;
        internal::run_pipeline(r.device, {image}, output, o.stream, "bilateral pipeline", [&] {
            return internal::with_output_at_image_mins(image, output, [&](halide_buffer_t *out) {
                return fn(image, static_cast<int32_t>(o.boundary), o.fill_value, sigma_spatial, sigma_range, radius,
                          out);
            });
        });
        return {r.device, static_cast<BilateralAlgorithm>(value), row->name(), radius};
    }
    throw Error(ErrorCode::unsupported, why);
}

}  // namespace halconv::detail
