// Multi-channel 2D cross-correlation with N kernels as a GEMM in a hand-written CUDA
// extern stage (runtime_kernels/multichannel/), so Halide stages can feed and consume it.
// Layouts as generators/multichannel_generator.cpp: image (c, x, y), kernels
// (c, i, j, n), output (n, x, y).
//
//   halconv_multichannel_gemm_valid: the valid correlation of the image as it is (no copy).
//   halconv_multichannel_gemm: same / full placement and every boundary rule: a Halide
//     stage builds the extended, shifted image on the GPU with its channels padded to the
//     stage's channel pitch (zeros; runtime_kernels/contract.h),
//       shifted(c, x, y) = c < C ? padded(c, x - offset_x, y - offset_y) : 0
//     and the extern stage computes the valid correlation of it.
//
// GeneratorParam gemm (rk::contract::multichannel_gemms): im2col (seed 002's column
// buffer, then a GEMM; f16f32 / f16 on tensor cores, f32 through cuBLAS SGEMM), or
// implicit_gemm (no column buffer; f16f32 / f16 only). CUDA targets only.
#include <string>

#include "Halide.h"
#include "contract.h"
#include "conv_common.h"
#include "tensor_core_schedules.h"

namespace halconv::gen {

namespace {

namespace contract = rk::contract;

// The extern stage of `gemm`: args are (image, kernels, flip, first channel and channel
// extent of the image region it reads).
Halide::Func multichannel_gemm_stage(const Halide::Target &target, Precision precision, const std::string &gemm,
                                     const std::vector<Halide::ExternFuncArgument> &args, const Halide::Var &n,
                                     const Halide::Var &x, const Halide::Var &y) {
    require(contract::contains(contract::multichannel_gemms, gemm), "multichannel_gemm: unknown gemm '" + gemm + "'");
    require(precision == Precision::f16 || precision == Precision::f16f32 ||
                (precision == Precision::f32 && gemm == "im2col"),
            "multichannel_gemm: precision must be f16, f16f32 or (im2col) f32");
    require(target.has_feature(Halide::Target::CUDA), "multichannel_gemm: the extern stage needs a CUDA target");
    Halide::Func conv{gemm};
    conv.define_extern(contract::multichannel_entry(gemm, precision_name(precision)), args, types_of(precision).output,
                       {n, x, y}, Halide::NameMangling::C, Halide::DeviceAPI::CUDA);
    return conv;
}

}  // namespace

class MultichannelGemmValid : public Halide::Generator<MultichannelGemmValid> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f16f32, precision_names};
    GeneratorParam<std::string> gemm{"gemm", "im2col"};  // one of rk::contract::multichannel_gemms

    Input<Buffer<void, 3>> input{"input"};    // (c, x, y)
    Input<Buffer<void, 4>> kernel{"kernel"};  // (c, i, j, n)
    Input<bool> flip{"flip"};
    Output<Buffer<void, 3>> output{"output"};  // (n, x, y)

    void generate() {
        // ALGORITHM (the schedule is the extern stage's own)
        Var n{"n"}, x{"x"}, y{"y"};
        output = multichannel_gemm_stage(get_target(), precision, gemm.value(),
                                         {input, kernel, flip, input.dim(0).min(), kernel.dim(0).extent()}, n, x, y);
    }
};

class MultichannelGemm : public Halide::Generator<MultichannelGemm> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f16f32, precision_names};
    GeneratorParam<std::string> gemm{"gemm", "im2col"};  // one of rk::contract::multichannel_gemms

    Input<Buffer<void, 3>> input{"input"};    // (c, x, y)
    Input<Buffer<void, 4>> kernel{"kernel"};  // (c, i, j, n)
    Input<int32_t> boundary{"boundary"};      // a halconv::Boundary value
    Input<double> fill{"fill"};               // value outside the image for Boundary::constant
    Input<int32_t> offset_x{"offset_x"};
    Input<int32_t> offset_y{"offset_y"};
    Input<bool> flip{"flip"};
    Output<Buffer<void, 3>> output{"output"};  // (n, x, y)

    void generate() {
        // ALGORITHM
        Var c{"c"}, n{"n"}, x{"x"}, y{"y"};
        const Expr channels = kernel.dim(0).extent();
        Func shifted{"shifted"};
        // The extern stage becomes the output first: the fold test reads the output
        // buffer's bounds, which exist only once the output has its Func.
        const Expr pitch =
            gemm.value() == "implicit_gemm"
                ? contract::implicit_gemm_channel_pitch(
                      channels, [](const Expr &in, const Expr &a, const Expr &b) { return select(in, a, b); })
                : contract::im2col_channel_pitch(channels);
        output = multichannel_gemm_stage(get_target(), precision, gemm.value(), {shifted, kernel, flip, Expr(0), pitch},
                                         n, x, y);
        const Expr near =
            reads_within_one_fold(input, output, kernel.dim(1).extent(), kernel.dim(2).extent(), offset_x, offset_y, 1);
        const Halide::Type storage = types_of(precision).storage;
        Func padded = extend_by_rule(input, boundary, Halide::cast(storage, fill), near, x, y, {c});
        // Channels past C read channel C-1 (kept inside the image) and are replaced by 0.
        const Expr image_c = input.dim(0).min() + Halide::min(c, channels - 1);
        shifted(c, x, y) =
            Halide::select(c < channels, padded(image_c, x - offset_x, y - offset_y), Halide::cast(storage, 0));

        // SCHEDULE
        sched::schedule_multichannel_gemm_boundary_gpu(shifted, c, x, y);
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::MultichannelGemmValid, halconv_multichannel_gemm_valid)
HALIDE_REGISTER_GENERATOR(halconv::gen::MultichannelGemm, halconv_multichannel_gemm)
