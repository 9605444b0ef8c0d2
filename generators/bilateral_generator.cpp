// The bilateral filter (seed 003 §II.B, eq. 3; Tomasi and Manduchi), a linear
// time-variant filter: each output is a normalized sum over the (2 radius + 1)^2 square
// window N(p) around it,
//
//   output(p) = sum_q ws(p, q) wr(I(p), I(q)) I(q) / sum_q ws(p, q) wr(I(p), I(q))
//   ws = exp(-|p - q|^2 / (2 sigma_spatial^2)),  wr = exp(-(I(p) - I(q))^2 / (2 sigma_range^2))
//
// with I the image extended by the boundary rule (so the window's samples outside the
// image, and their range weights, are the rule's). The centre's weight is 1, so the
// denominator is at least 1. Sums in the precision's accumulator type (float32 for
// f16f32); the output covers the image (its mins are the image's).
#include <map>

#include "Halide.h"
#include "bilateral_schedules.h"
#include "contract.h"
#include "conv_common.h"
#include "tensor_core_schedules.h"

namespace halconv::gen {

class Bilateral : public Halide::Generator<Bilateral> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<std::string> schedule{"schedule", "cpu_tiled"};  // a name of sched::bilateral_schedules()

    Input<Buffer<void, 2>> input{"input"};
    Input<int32_t> boundary{"boundary"};  // a halconv::Boundary value
    Input<double> fill{"fill"};           // value outside the image for Boundary::constant
    Input<double> sigma_spatial{"sigma_spatial"};
    Input<double> sigma_range{"sigma_range"};
    Input<int32_t> radius{"radius"};
    Output<Buffer<void, 2>> output{"output"};

    void generate() {
        require_types("bilateral", precision, input, input, output);
        const PrecisionTypes types = types_of(precision);
        const auto acc = [&](const Expr &e) { return Halide::cast(types.accumulator, e); };

        // ALGORITHM
        Var x{"x"}, y{"y"}, i{"i"};
        const Expr width = 2 * radius + 1;
        // The output is the image's domain, so the input stands in for it in the fold test.
        const Expr near = reads_within_one_fold(input, input, width, width, radius, radius);
        Func padded = extend_by_rule(input, boundary, Halide::cast(types.storage, fill), near, x, y);
        // ws(p, q) = g(dx) g(dy): one exponential per offset, not per tap.
        Func spatial{"spatial"};
        const Expr ss = sigma_spatial, sr = sigma_range;
        spatial(i) = Halide::exp(acc(-(i * i)) / acc(Expr(2.0) * ss * ss));
        const Expr range_scale = acc(Expr(-0.5) / (sr * sr));
        RDom r(-radius, width, -radius, width, "r");
        const Expr q = acc(padded(x + r.x, y + r.y));
        const Expr d = q - acc(padded(x, y));
        const Expr w = spatial(r.x) * spatial(r.y) * range_exp(d * d * range_scale);
        Func sum{"sum"};
        sum(x, y) = {acc(0), acc(0)};
        sum(x, y) = {sum(x, y)[0] + w * q, sum(x, y)[1] + w};
        output(x, y) = Halide::cast(types.output, sum(x, y)[0] / sum(x, y)[1]);

        // SCHEDULE
        sched::BilateralStages stages{.output = output,
                                      .sum = sum,
                                      .padded = padded,
                                      .spatial = spatial,
                                      .x = x,
                                      .y = y,
                                      .r = r,
                                      .radius = radius,
                                      .out_width = output.dim(0).extent(),
                                      .out_height = output.dim(1).extent(),
                                      .near_image = near,
                                      .storage = types.storage,
                                      .accumulator = types.accumulator,
                                      .target = get_target()};
        sched::apply_schedule(sched::bilateral_schedules(), schedule, stages, "bilateral");
    }

private:
    // The range weight's exponential, one per tap. On CUDA in float32 libdevice's
    // __nv_fast_expf (ex2.approx; error 2 + 1.16 |x| ulp, a fraction of expf's instructions),
    // which halconv.h's bound allows for; elsewhere exp.
    Expr range_exp(const Expr &x) const {
        if (get_target().has_feature(Halide::Target::CUDA) && x.type() == Halide::Float(32)) {
            return Halide::Internal::Call::make(Halide::Float(32), "__nv_fast_expf", {x},
                                                Halide::Internal::Call::PureExtern);
        }
        return Halide::exp(x);
    }
};

enum class BilateralLayout { kernel_image_m32n8k16 };
inline const std::map<std::string, BilateralLayout> bilateral_layout_names = {
    {"kernel_image_m32n8k16", BilateralLayout::kernel_image_m32n8k16}};

// halconv_bilateral_tensor_core: the same filter through seed 003's kernel-image-loop
// unrolling on tensor cores (runtime_kernels/bilateral/halconv_bl.h), float16 operands and
// float32 sums: a Halide stage extends and places the float16 image, the extern stage sums.
class BilateralTensorCore : public Halide::Generator<BilateralTensorCore> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f16f32, precision_names};
    GeneratorParam<BilateralLayout> layout{"layout", BilateralLayout::kernel_image_m32n8k16, bilateral_layout_names};

    Input<Buffer<void, 2>> input{"input"};
    Input<int32_t> boundary{"boundary"};
    Input<double> fill{"fill"};
    Input<double> sigma_spatial{"sigma_spatial"};
    Input<double> sigma_range{"sigma_range"};
    Input<int32_t> radius{"radius"};
    Output<Buffer<void, 2>> output{"output"};

    void generate() {
        require_types("bilateral_tensor_core", precision, input, input, output);
        require(precision == Precision::f16f32,
                "bilateral_tensor_core: float16 operands, float32 sums: precision f16f32 only");
        require(get_target().has_feature(Halide::Target::CUDA),
                "bilateral_tensor_core: the extern stage needs a CUDA target");
        // ALGORITHM
        Var x{"x"}, y{"y"};
        const Expr width = 2 * radius + 1;
        const Expr near = reads_within_one_fold(input, input, width, width, radius, radius);
        Func padded = extend_by_rule(input, boundary, Halide::cast(Halide::Float(16), fill), near, x, y);
        Func extended{"extended"};
        extended(x, y) = padded(x - radius, y - radius);  // output (x, y)'s window starts here
        const std::string layout_name = name_in(bilateral_layout_names, BilateralLayout(layout));
        Func sum{"bilateral_" + layout_name};
        sum.define_extern(rk::contract::bilateral_entry(layout_name, precision_name(precision)),
                          {extended, sigma_spatial, sigma_range, radius}, Halide::Float(32), {x, y},
                          Halide::NameMangling::C, Halide::DeviceAPI::CUDA);
        output = sum;
        // SCHEDULE: the extended image one thread per sample; the sums are the extern stage's.
        sched::schedule_extended_image_gpu(extended, x, y);
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::Bilateral, halconv_bilateral)
HALIDE_REGISTER_GENERATOR(halconv::gen::BilateralTensorCore, halconv_bilateral_tensor_core)
