// Direct multi-channel 2D cross-correlation with N kernels, in the style of Halide's
// apps/conv_layer: every output channel n is the sum over input channels c and kernel
// taps (i, j) of
//
//   output(n, x, y) = sum_{c,i,j} kern(c, i, j, n) * padded(c, x + i - offset_x, y + j - offset_y)
//
// with the image (c, x, y) channels innermost, the kernels (c, i, j, n) and the output
// (n, x, y); padded is the image extended in x and y by the boundary rule, kern the
// kernels flipped in x and y when flip is true (convolution). Channels are matched
// counting from each buffer's first channel; output channel n uses kernel n. The
// non-extern counterpart of the GEMM extern stages (generators/multichannel_gemm_generator.cpp).
#include "Halide.h"
#include "conv_common.h"
#include "multichannel_schedules.h"

namespace halconv::gen {

class Multichannel : public Halide::Generator<Multichannel> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<std::string> schedule{"schedule", "cpu_direct"};  // a name of sched::multichannel_schedules()

    Input<Buffer<void, 3>> input{"input"};    // (c, x, y)
    Input<Buffer<void, 4>> kernel{"kernel"};  // (c, i, j, n)
    Input<int32_t> boundary{"boundary"};      // a halconv::Boundary value
    Input<double> fill{"fill"};               // value outside the image for Boundary::constant
    Input<int32_t> offset_x{"offset_x"};
    Input<int32_t> offset_y{"offset_y"};
    Input<bool> flip{"flip"};
    Output<Buffer<void, 3>> output{"output"};  // (n, x, y)

    void generate() {
        require_types("multichannel", precision, input, kernel, output);
        const PrecisionTypes types = types_of(precision);

        // ALGORITHM
        Var c{"c"}, n{"n"}, x{"x"}, y{"y"};
        const Expr channels = kernel.dim(0).extent();
        const Expr k_width = kernel.dim(1).extent(), k_height = kernel.dim(2).extent();
        const Expr near = reads_within_one_fold(input, output, k_width, k_height, offset_x, offset_y, 1);
        Func padded = extend_by_rule(input, boundary, Halide::cast(types.storage, fill), near, x, y, {c});
        RDom r(0, channels, 0, k_width, 0, k_height, "r");  // r.x channel, r.y and r.z the taps
        const Expr tap =
            kernel(kernel.dim(0).min() + r.x, kernel.dim(1).min() + Halide::select(flip, k_width - 1 - r.y, r.y),
                   kernel.dim(2).min() + Halide::select(flip, k_height - 1 - r.z, r.z), n);
        Func sum{"sum"};
        sum(n, x, y) = Halide::cast(types.accumulator, 0);
        sum(n, x, y) +=
            Halide::cast(types.accumulator, tap) *
            Halide::cast(types.accumulator, padded(input.dim(0).min() + r.x, x + r.y - offset_x, y + r.z - offset_y));
        output(n, x, y) = Halide::cast(types.output, sum(n, x, y));

        // ESTIMATES (seed 002's DNN setting: 64 channels in and out, 3 x 3)
        input.set_estimates({{0, 64}, {0, 1024}, {0, 1024}});
        kernel.set_estimates({{0, 64}, {0, 3}, {0, 3}, {0, 64}});
        output.set_estimates({{0, 64}, {0, 1024}, {0, 1024}});

        // SCHEDULE
        sched::MultichannelStages stages{.output = output,
                                         .sum = sum,
                                         .padded = padded,
                                         .c = c,
                                         .n = n,
                                         .x = x,
                                         .y = y,
                                         .r = r,
                                         .accumulator = types.accumulator,
                                         .target = get_target()};
        sched::apply_schedule(sched::multichannel_schedules(), schedule, stages, "multichannel");
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::Multichannel, halconv_multichannel)
