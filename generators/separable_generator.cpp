// Separable 2D cross-correlation: a row kernel and a column kernel, both run-time
// inputs, equal to conv2d with the kernel col_kernel^T * row_kernel.
//
//   rows(x, y)   = sum_i row(i) * padded(x + i - offset_x, y)
//   output(x, y) = sum_j col(j) * rows(x, y + j - offset_y)
//
// halconv_separable_cuda: the same definition as hand-written extern stages
// (runtime_kernels/separable/halconv_sep.h), in three forms: `sliding` applies the
// boundary rule as it stages the image and keeps the sums' sliding windows in registers;
// `fft_lines` (float32 transforms: f32, f16f32, f16) runs both passes as 1D overlap-save
// FFTs along lines, from 80 to 150 taps together by output size (fft_lines_crossover) and
// past the sliding pass's shared memory; `tensor_core` (f32, sm_90) runs both passes as
// Toeplitz products on Hopper's warpgroup tensor cores.
#include <map>

#include "Halide.h"
#include "contract.h"
#include "conv_common.h"
#include "separable_schedules.h"

namespace halconv::gen {

class Separable : public Halide::Generator<Separable> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<std::string> schedule{"schedule", "cpu_separable"};  // a name of sched::separable_schedules()

    Input<Buffer<void, 2>> input{"input"};
    Input<Buffer<void, 1>> row_kernel{"row_kernel"};  // along x, length k_width
    Input<Buffer<void, 1>> col_kernel{"col_kernel"};  // along y, length k_height
    Input<int32_t> boundary{"boundary"};
    Input<double> fill{"fill"};
    Input<int32_t> offset_x{"offset_x"};
    Input<int32_t> offset_y{"offset_y"};
    Input<bool> flip{"flip"};
    Output<Buffer<void, 2>> output{"output"};

    void generate() {
        require_types("separable", precision, input, row_kernel, output);
        require_types("separable", precision, input, col_kernel, output);
        const PrecisionTypes types = types_of(precision);

        // ALGORITHM
        Var x{"x"}, y{"y"};
        const Expr k_width = row_kernel.dim(0).extent(), k_height = col_kernel.dim(0).extent();
        const Expr near = reads_within_one_fold(input, output, k_width, k_height, offset_x, offset_y);
        Func padded = extend_by_rule(input, boundary, Halide::cast(types.storage, fill), near, x, y);
        const auto acc = [&](const Expr &e) { return Halide::cast(types.accumulator, e); };
        RDom rr(0, k_width, "rr"), rc(0, k_height, "rc");
        const Expr row_tap = row_kernel(row_kernel.dim(0).min() + Halide::select(flip, k_width - 1 - rr, rr));
        const Expr col_tap = col_kernel(col_kernel.dim(0).min() + Halide::select(flip, k_height - 1 - rc, rc));
        Func rows{"rows"}, sum{"sum"};
        rows(x, y) = acc(0);
        rows(x, y) += acc(row_tap) * acc(padded(x + rr - offset_x, y));
        sum(x, y) = acc(0);
        sum(x, y) += acc(col_tap) * rows(x, y + rc - offset_y);
        output(x, y) = Halide::cast(types.output, sum(x, y));

        // SCHEDULE
        sched::SeparableStages stages{.output = output,
                                      .sum = sum,
                                      .rows = rows,
                                      .padded = padded,
                                      .x = x,
                                      .y = y,
                                      .rr = rr,
                                      .rc = rc,
                                      .k_width = k_width,
                                      .k_height = k_height,
                                      .out_width = output.dim(0).extent(),
                                      .out_height = output.dim(1).extent(),
                                      .near_image = near,
                                      .storage = types.storage,
                                      .accumulator = types.accumulator,
                                      .target = get_target()};
        sched::apply_schedule(sched::separable_schedules(), schedule, stages, "separable");
    }
};

enum class SeparableForm { sliding, fft_lines, tensor_core };
inline const std::map<std::string, SeparableForm> separable_form_names = {{"sliding", SeparableForm::sliding},
                                                                          {"fft_lines", SeparableForm::fft_lines},
                                                                          {"tensor_core", SeparableForm::tensor_core}};

class SeparableCuda : public Halide::Generator<SeparableCuda> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<SeparableForm> form{"form", SeparableForm::sliding, separable_form_names};

    Input<Buffer<void, 2>> input{"input"};
    Input<Buffer<void, 1>> row_kernel{"row_kernel"};
    Input<Buffer<void, 1>> col_kernel{"col_kernel"};
    Input<int32_t> boundary{"boundary"};
    Input<double> fill{"fill"};
    Input<int32_t> offset_x{"offset_x"};
    Input<int32_t> offset_y{"offset_y"};
    Input<bool> flip{"flip"};
    Output<Buffer<void, 2>> output{"output"};

    void generate() {
        require_types("separable_cuda", precision, input, row_kernel, output);
        require_types("separable_cuda", precision, input, col_kernel, output);
        require(get_target().has_feature(Halide::Target::CUDA), "separable_cuda: the extern stage needs a CUDA target");
        require(SeparableForm(form) != SeparableForm::fft_lines || Precision(precision) != Precision::f64,
                "separable_cuda: the fft_lines form has float32 transforms (f32, f16f32, f16), not f64");
        require(SeparableForm(form) != SeparableForm::tensor_core || Precision(precision) == Precision::f32,
                "separable_cuda: the tensor_core form is float32 on float16 parts (f32 only)");
        // ALGORITHM (the schedule is the extern stage's own)
        const std::string form_name = name_in(separable_form_names, SeparableForm(form));
        Var x{"x"}, y{"y"};
        Func sum{"separable_" + form_name};
        sum.define_extern(rk::contract::separable_entry(form_name, precision_name(precision)),
                          {input, row_kernel, col_kernel, boundary, fill, offset_x, offset_y, flip},
                          types_of(precision).output, {x, y}, Halide::NameMangling::C, Halide::DeviceAPI::CUDA);
        output = sum;
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::Separable, halconv_separable)
HALIDE_REGISTER_GENERATOR(halconv::gen::SeparableCuda, halconv_separable_cuda)
