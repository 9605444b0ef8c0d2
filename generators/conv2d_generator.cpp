// Direct 2D cross-correlation with a run-time kernel of any size, every boundary rule
// and any output placement (valid / same / full are offsets chosen by the caller).
//
//   output(x, y) = sum_{i,j} kern(i, j) * padded(x + i - offset_x, y + j - offset_y)
//
// where padded is the input extended by the boundary rule and kern is the kernel,
// flipped when flip is true (convolution). One generator, many AOT variants: the
// precision and the schedule are GeneratorParams (see variants.cmake).
//
// halconv_conv2d_batch is the same over a batch of images (x, y, n), each image extended
// by the rule on its own: one pipeline call, and on the GPU one launch, for the batch.
//
// halconv_conv2d_cuda (and _batch) computes the same definition on CUDA as a hand-written
// extern stage (runtime_kernels/conv2d/halconv_conv2d.h), for kernels up to 7 x 7: the
// `sliding` form, the boundary rule applied inside the stage.
#include <map>

#include "Halide.h"
#include "contract.h"
#include "conv2d_schedules.h"
#include "conv_common.h"

namespace halconv::gen {

template <bool Batch>
class Conv2dOf : public Halide::Generator<Conv2dOf<Batch>> {
    static constexpr int dims = Batch ? 3 : 2;

public:
    template <typename T>
    using Input = Halide::GeneratorInput<T>;
    template <typename T>
    using Output = Halide::GeneratorOutput<T>;
    template <typename T>
    using GeneratorParam = Halide::GeneratorParam<T>;
    using Func = Halide::Func;
    using Var = Halide::Var;
    using RDom = Halide::RDom;
    using Expr = Halide::Expr;

    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<std::string> schedule{"schedule", "cpu_tiled"};  // a name of sched::conv2d_schedules()

    Input<Halide::Buffer<void, dims>> input{"input"};
    Input<Halide::Buffer<void, 2>> kernel{"kernel"};
    Input<int32_t> boundary{"boundary"};  // a halconv::Boundary value
    Input<double> fill{"fill"};           // value outside the image for Boundary::constant
    Input<int32_t> offset_x{"offset_x"};
    Input<int32_t> offset_y{"offset_y"};
    Input<bool> flip{"flip"};
    Output<Halide::Buffer<void, dims>> output{"output"};

    void generate() {
        const Halide::Target gen_target = this->get_target();
        require_types("conv2d", precision, input, kernel, output);
        const PrecisionTypes types = types_of(precision);

        // ALGORITHM
        Var x{"x"}, y{"y"};
        const std::vector<Var> batch = batch_vars(Batch);
        const std::vector<Var> xy = with_batch<Var>({x, y}, batch);
        const Expr k_width = kernel.dim(0).extent(), k_height = kernel.dim(1).extent();
        const Expr near = reads_within_one_fold(input, output, k_width, k_height, offset_x, offset_y);
        Func padded = extend_by_rule(input, boundary, Halide::cast(types.storage, fill), near, x, y, {},
                                     !gen_target.has_gpu_feature(), batch);
        RDom r(0, k_width, 0, k_height, "r");
        const Expr tap =
            kernel_tap(kernel, kernel.dim(0).min(), k_width, kernel.dim(1).min(), k_height, flip, r.x, r.y);
        Func sum{"sum"};
        sum(xy) = Halide::cast(types.accumulator, 0);
        sum(xy) +=
            Halide::cast(types.accumulator, tap) *
            Halide::cast(types.accumulator, padded(with_batch<Expr>({x + r.x - offset_x, y + r.y - offset_y}, batch)));
        output(xy) = Halide::cast(types.output, sum(xy));

        // ESTIMATES (used by the autoscheduled variants only)
        Halide::Region image_estimates{{0, 4096}, {0, 4096}};
        if (Batch) {
            image_estimates.push_back({0, 16});
        }
        input.set_estimates(image_estimates);
        kernel.set_estimates({{0, 15}, {0, 15}});
        output.set_estimates(image_estimates);
        boundary.set_estimate(int(Boundary::constant));
        fill.set_estimate(0.0);
        offset_x.set_estimate(7);
        offset_y.set_estimate(7);
        flip.set_estimate(false);

        // SCHEDULE
        if (this->using_autoscheduler()) {
            return;
        }
        sched::Conv2dStages stages{.output = output,
                                   .sum = sum,
                                   .padded = padded,
                                   .x = x,
                                   .y = y,
                                   .batch = batch,
                                   .r = r,
                                   .k_width = k_width,
                                   .k_height = k_height,
                                   .out_width = output.dim(0).extent(),
                                   .out_height = output.dim(1).extent(),
                                   .near_image = near,
                                   .storage = types.storage,
                                   .accumulator = types.accumulator,
                                   .target = gen_target};
        sched::apply_schedule(sched::conv2d_schedules(), schedule, stages, "conv2d");
    }
};

using Conv2d = Conv2dOf<false>;
using Conv2dBatch = Conv2dOf<true>;

enum class Conv2dForm { sliding };
inline const std::map<std::string, Conv2dForm> conv2d_form_names = {{"sliding", Conv2dForm::sliding}};

template <bool Batch>
class Conv2dCudaOf : public Halide::Generator<Conv2dCudaOf<Batch>> {
    static constexpr int dims = Batch ? 3 : 2;

public:
    Halide::GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    Halide::GeneratorParam<Conv2dForm> form{"form", Conv2dForm::sliding, conv2d_form_names};

    // Conv2dOf's inputs (the registry's kernel2d signature).
    Halide::GeneratorInput<Halide::Buffer<void, dims>> input{"input"};
    Halide::GeneratorInput<Halide::Buffer<void, 2>> kernel{"kernel"};
    Halide::GeneratorInput<int32_t> boundary{"boundary"};
    Halide::GeneratorInput<double> fill{"fill"};
    Halide::GeneratorInput<int32_t> offset_x{"offset_x"};
    Halide::GeneratorInput<int32_t> offset_y{"offset_y"};
    Halide::GeneratorInput<bool> flip{"flip"};
    Halide::GeneratorOutput<Halide::Buffer<void, dims>> output{"output"};

    void generate() {
        require_types("conv2d_cuda", precision, input, kernel, output);
        require(this->get_target().has_feature(Halide::Target::CUDA),
                "conv2d_cuda: the extern stage needs a CUDA target");
        // ALGORITHM (the schedule is the extern stage's own)
        const std::string form_name = name_in(conv2d_form_names, Conv2dForm(form));
        Halide::Var x{"x"}, y{"y"};
        Halide::Func sum{"conv2d_" + form_name};
        sum.define_extern(rk::contract::conv2d_entry(form_name, precision_name(precision)),
                          {input, kernel, boundary, fill, offset_x, offset_y, flip}, types_of(precision).output,
                          with_batch<Halide::Var>({x, y}, batch_vars(Batch)), Halide::NameMangling::C,
                          Halide::DeviceAPI::CUDA);
        output = sum;
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::Conv2d, halconv_conv2d)
HALIDE_REGISTER_GENERATOR(halconv::gen::Conv2dBatch, halconv_conv2d_batch)
HALIDE_REGISTER_GENERATOR(halconv::gen::Conv2dCudaOf<false>, halconv_conv2d_cuda)
HALIDE_REGISTER_GENERATOR(halconv::gen::Conv2dCudaOf<true>, halconv_conv2d_cuda_batch)
