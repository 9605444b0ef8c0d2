// Low-rank 2D cross-correlation: a kernel given as r pairs of factors, equal to conv2d
// with the kernel sum_k col_factors(., k)^T * row_factors(., k) — r separable passes
// summed, r (kw + kh) multiply-adds per output instead of kw kh.
//
//   rows(x, y, k) = sum_i row_factors(i, k) * padded(x + i - offset_x, y)
//   output(x, y)  = sum_k sum_j col_factors(j, k) * rows(x, y + j - offset_y, k)
//
// The factors come from the kernel's SVD (src/validate.cpp, low_rank_factorize): a
// Laplacian of Gaussian or a difference of Gaussians is rank 2.
//
// halconv_low_rank_cuda: the same definition through the separable sliding extern stage,
// one pass per term (runtime_kernels/separable/halconv_sep.h).
#include <map>

#include "Halide.h"
#include "contract.h"
#include "conv_common.h"
#include "low_rank_schedules.h"

namespace halconv::gen {

class LowRank : public Halide::Generator<LowRank> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<std::string> schedule{"schedule", "cpu_low_rank"};  // a name of sched::low_rank_schedules()

    Input<Buffer<void, 2>> input{"input"};
    Input<Buffer<void, 2>> row_factors{"row_factors"};  // (tap along x, rank): k_width x r
    Input<Buffer<void, 2>> col_factors{"col_factors"};  // (tap along y, rank): k_height x r
    Input<int32_t> boundary{"boundary"};
    Input<double> fill{"fill"};
    Input<int32_t> offset_x{"offset_x"};
    Input<int32_t> offset_y{"offset_y"};
    Input<bool> flip{"flip"};
    Output<Buffer<void, 2>> output{"output"};

    void generate() {
        require_types("low_rank", precision, input, row_factors, output);
        require_types("low_rank", precision, input, col_factors, output);
        const PrecisionTypes types = types_of(precision);

        // ALGORITHM
        Var x{"x"}, y{"y"}, k{"k"};
        const Expr k_width = row_factors.dim(0).extent(), k_height = col_factors.dim(0).extent();
        const Expr rank = row_factors.dim(1).extent();
        const Expr near = reads_within_one_fold(input, output, k_width, k_height, offset_x, offset_y);
        Func padded = extend_by_rule(input, boundary, Halide::cast(types.storage, fill), near, x, y);
        const auto acc = [&](const Expr &e) { return Halide::cast(types.accumulator, e); };
        RDom rr(0, k_width, "rr");
        RDom rc(0, k_height, 0, rank, "rc");  // taps inner, ranks outer
        const Expr row_tap = row_factors(row_factors.dim(0).min() + Halide::select(flip, k_width - 1 - rr, rr),
                                         row_factors.dim(1).min() + k);
        const Expr col_tap = col_factors(col_factors.dim(0).min() + Halide::select(flip, k_height - 1 - rc.x, rc.x),
                                         col_factors.dim(1).min() + rc.y);
        Func rows{"rows"}, sum{"sum"};
        rows(x, y, k) = acc(0);
        rows(x, y, k) += acc(row_tap) * acc(padded(x + rr - offset_x, y));
        sum(x, y) = acc(0);
        sum(x, y) += acc(col_tap) * rows(x, y + rc.x - offset_y, rc.y);
        output(x, y) = Halide::cast(types.output, sum(x, y));

        // SCHEDULE
        sched::LowRankStages stages{.output = output,
                                    .sum = sum,
                                    .rows = rows,
                                    .padded = padded,
                                    .x = x,
                                    .y = y,
                                    .k = k,
                                    .rr = rr,
                                    .rc = rc,
                                    .k_width = k_width,
                                    .k_height = k_height,
                                    .rank = rank,
                                    .out_width = output.dim(0).extent(),
                                    .out_height = output.dim(1).extent(),
                                    .near_image = near,
                                    .storage = types.storage,
                                    .accumulator = types.accumulator,
                                    .target = get_target()};
        sched::apply_schedule(sched::low_rank_schedules(), schedule, stages, "low_rank");
    }
};

enum class LowRankForm { sliding };
inline const std::map<std::string, LowRankForm> low_rank_form_names = {{"sliding", LowRankForm::sliding}};

// halconv_low_rank_cuda: the same definition through the separable sliding extern stage
// (runtime_kernels/separable/halconv_sep.h), which takes the factors as (tap, term)
// buffers and sums one pass per term.
class LowRankCuda : public Halide::Generator<LowRankCuda> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<LowRankForm> form{"form", LowRankForm::sliding, low_rank_form_names};

    Input<Buffer<void, 2>> input{"input"};
    Input<Buffer<void, 2>> row_factors{"row_factors"};
    Input<Buffer<void, 2>> col_factors{"col_factors"};
    Input<int32_t> boundary{"boundary"};
    Input<double> fill{"fill"};
    Input<int32_t> offset_x{"offset_x"};
    Input<int32_t> offset_y{"offset_y"};
    Input<bool> flip{"flip"};
    Output<Buffer<void, 2>> output{"output"};

    void generate() {
        require_types("low_rank_cuda", precision, input, row_factors, output);
        require_types("low_rank_cuda", precision, input, col_factors, output);
        require(get_target().has_feature(Halide::Target::CUDA), "low_rank_cuda: the extern stage needs a CUDA target");
        // ALGORITHM (the schedule is the extern stage's own)
        const std::string form_name = name_in(low_rank_form_names, LowRankForm(form));
        Var x{"x"}, y{"y"};
        Func sum{"low_rank_" + form_name};
        sum.define_extern(rk::contract::separable_entry(form_name, precision_name(precision)),
                          {input, row_factors, col_factors, boundary, fill, offset_x, offset_y, flip},
                          types_of(precision).output, {x, y}, Halide::NameMangling::C, Halide::DeviceAPI::CUDA);
        output = sum;
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::LowRank, halconv_low_rank)
HALIDE_REGISTER_GENERATOR(halconv::gen::LowRankCuda, halconv_low_rank_cuda)
