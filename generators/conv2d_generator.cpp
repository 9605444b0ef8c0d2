// Direct 2D cross-correlation with a run-time kernel of any size, every boundary rule
// and any output placement (valid / same / full are offsets chosen by the caller).
//
//   output(x, y) = sum_{i,j} kern(i, j) * padded(x + i - offset_x, y + j - offset_y)
//
// where padded is the input extended by the boundary rule and kern is the kernel,
// flipped when flip is true (convolution). One generator, many AOT variants: the
// precision and the schedule are GeneratorParams (see variants.cmake).
#include "Halide.h"
#include "conv2d_schedules.h"
#include "conv_common.h"

namespace halconv::gen {

class Conv2d : public Halide::Generator<Conv2d> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<std::string> schedule{"schedule", "cpu_tiled"};  // a name of sched::conv2d_schedules()

    Input<Buffer<void, 2>> input{"input"};
    Input<Buffer<void, 2>> kernel{"kernel"};
    Input<int32_t> boundary{"boundary"};  // a halconv::Boundary value
    Input<double> fill{"fill"};           // value outside the image for Boundary::constant
    Input<int32_t> offset_x{"offset_x"};
    Input<int32_t> offset_y{"offset_y"};
    Input<bool> flip{"flip"};
    Output<Buffer<void, 2>> output{"output"};

    void generate() {
        require_types("conv2d", precision, input, kernel, output);
        const PrecisionTypes types = types_of(precision);

        // ALGORITHM
        Var x{"x"}, y{"y"};
        const Expr k_width = kernel.dim(0).extent(), k_height = kernel.dim(1).extent();
        const Expr near = reads_within_one_fold(input, output, k_width, k_height, offset_x, offset_y);
        Func padded = extend_by_rule(input, boundary, Halide::cast(types.storage, fill), near, x, y, {},
                                     !get_target().has_gpu_feature());
        RDom r(0, k_width, 0, k_height, "r");
        const Expr tap =
            kernel_tap(kernel, kernel.dim(0).min(), k_width, kernel.dim(1).min(), k_height, flip, r.x, r.y);
        Func sum{"sum"};
        sum(x, y) = Halide::cast(types.accumulator, 0);
        sum(x, y) += Halide::cast(types.accumulator, tap) *
                     Halide::cast(types.accumulator, padded(x + r.x - offset_x, y + r.y - offset_y));
        output(x, y) = Halide::cast(types.output, sum(x, y));

        // ESTIMATES (used by the autoscheduled variants only)
        input.set_estimates({{0, 4096}, {0, 4096}});
        kernel.set_estimates({{0, 15}, {0, 15}});
        output.set_estimates({{0, 4096}, {0, 4096}});
        boundary.set_estimate(int(Boundary::constant));
        fill.set_estimate(0.0);
        offset_x.set_estimate(7);
        offset_y.set_estimate(7);
        flip.set_estimate(false);

        // SCHEDULE
        if (using_autoscheduler()) {
            return;
        }
        sched::Conv2dStages stages{.output = output,
                                   .sum = sum,
                                   .padded = padded,
                                   .x = x,
                                   .y = y,
                                   .r = r,
                                   .k_width = k_width,
                                   .k_height = k_height,
                                   .out_width = output.dim(0).extent(),
                                   .out_height = output.dim(1).extent(),
                                   .near_image = near,
                                   .storage = types.storage,
                                   .accumulator = types.accumulator,
                                   .target = get_target()};
        sched::apply_schedule(sched::conv2d_schedules(), schedule, stages, "conv2d");
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::Conv2d, halconv_conv2d)
