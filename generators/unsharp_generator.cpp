// Unsharp mask with a large blur, the convolution on tensor cores composed with
// Halide stages (seed 000's im2tensor as an extern stage):
//
//   shifted(x, y) = float16(padded(x - offset_x, y - offset_y))    Halide stage
//   blur          = valid correlation of shifted by the kernel     extern stage (CUDA:
//                   im2tensor_fused, f16 operands, f32 sums) or the same sum in Halide (CPU)
//   output        = input + amount * (input - blur)                Halide stage
//
// padded is the float32 input extended by the boundary rule; the offsets place the
// blur as mode same does, so blur = correlate2d(image, kernel, same, boundary) with the
// image rounded to float16. Any kernel (a large Gaussian for unsharp masking; a
// difference of Gaussians gives a band-pass sharpening). The output covers the image.
#include "Halide.h"
#include "conv_common.h"
#include "tensor_core_schedules.h"
#include "tensor_core_stage.h"
#include "unsharp_schedules.h"

namespace halconv::gen {

class Unsharp : public Halide::Generator<Unsharp> {
public:
    GeneratorParam<std::string> schedule{"schedule", "cpu_tiled"};  // a name of sched::unsharp_schedules()

    Input<Buffer<float, 2>> input{"input"};
    Input<Buffer<Halide::float16_t, 2>> kernel{"kernel"};
    Input<int32_t> boundary{"boundary"};  // a halconv::Boundary value
    Input<float> fill{"fill"};            // value outside the image for Boundary::constant
    Input<int32_t> offset_x{"offset_x"};
    Input<int32_t> offset_y{"offset_y"};
    Input<float> amount{"amount"};
    Output<Buffer<float, 2>> output{"output"};

    void generate() {
        // The blur is the extern stage where the target has CUDA (the gpu_tensor_core schedule).
        const bool tensor_cores = get_target().has_feature(Halide::Target::CUDA);
        // ALGORITHM
        Var x{"x"}, y{"y"};
        const Expr k_width = kernel.dim(0).extent(), k_height = kernel.dim(1).extent();
        // The output is the image's domain (bounds set below), so the input stands in
        // for it in the fold test.
        const Expr near = reads_within_one_fold(input, input, k_width, k_height, offset_x, offset_y);
        Func padded = extend_by_rule(input, boundary, fill, near, x, y);
        Func shifted{"shifted"};
        shifted(x, y) = Halide::cast<Halide::float16_t>(padded(x - offset_x, y - offset_y));
        Func blur{"blur"};
        RDom r(0, k_width, 0, k_height, "r");
        if (tensor_cores) {
            blur =
                tensor_core_stage(get_target(), "im2tensor_fused", Precision::f16f32, {shifted, kernel, false}, x, y);
        } else {
            blur(x, y) = 0.0f;
            blur(x, y) += Halide::cast<float>(kernel(kernel.dim(0).min() + r.x, kernel.dim(1).min() + r.y)) *
                          Halide::cast<float>(shifted(x + r.x, y + r.y));
        }
        output(x, y) = input(x, y) + amount * (input(x, y) - blur(x, y));
        output.dim(0).set_bounds(input.dim(0).min(), input.dim(0).extent());
        output.dim(1).set_bounds(input.dim(1).min(), input.dim(1).extent());

        // SCHEDULE
        sched::UnsharpStages stages{
            .output = output, .blur = blur, .shifted = shifted, .x = x, .y = y, .r = r, .target = get_target()};
        sched::apply_schedule(sched::unsharp_schedules(), schedule, stages, "unsharp");
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::Unsharp, halconv_unsharp)
