// Multi-channel 2D cross-correlation with N kernels as im2col + GEMM: a hand-written CUDA
// extern stage (runtime_kernels/im2col_conv.cu), so Halide stages can feed and consume it.
// Layouts as generators/multichannel_generator.cpp: image (c, x, y), kernels
// (c, i, j, n), output (n, x, y).
//
//   halconv_im2col_valid: the valid correlation of the image as it is (no copy).
//   halconv_im2col: same / full placement and every boundary rule: a Halide stage builds
//     the extended, shifted image on the GPU with its channels padded to a multiple of 4
//     (zeros), which lets the im2col kernel read 4 channels per load (seed 002's dpitch),
//       shifted(c, x, y) = c < C ? padded(c, x - offset_x, y - offset_y) : 0
//     and the extern stage computes the valid correlation of it.
//
// Precision: f16f32 / f16 (float16 operands on tensor cores, f32 accumulation, f32 or f16
// result) or f32 (cuBLAS SGEMM). CUDA targets only.
//
// GeneratorParam gemm: im2col (the column buffer), or implicit: the extern stage is the
// implicit GEMM (no column buffer; f16 / f16f32 only), and the boundary stage pads
// channels to the implicit kernel's pitch (2, 4 or 8 for C <= 8, else C rounded up to
// 8) so that its 16-byte copies apply.
#include "Halide.h"
#include "conv_common.h"
#include "tensor_core_schedules.h"

namespace halconv::gen {

// Which GEMM the extern stage runs (the registry's schedule of an im2col row).
enum class Gemm { im2col, implicit };
inline const std::map<std::string, Gemm> gemm_names = {{"im2col", Gemm::im2col}, {"implicit", Gemm::implicit}};

namespace {

// The extern stage: args are (image, kernels, flip, first channel and channel extent of
// the image region it reads).
Halide::Func im2col_stage(const Halide::Target &target, Precision precision, bool implicit,
                          const std::vector<Halide::ExternFuncArgument> &args, const Halide::Var &n,
                          const Halide::Var &x, const Halide::Var &y) {
    require(precision == Precision::f16 || precision == Precision::f16f32 || (precision == Precision::f32 && !implicit),
            "im2col: precision must be f16, f16f32 or (not implicit) f32");
    require(target.has_feature(Halide::Target::CUDA), "im2col: the extern stage needs a CUDA target");
    const std::string entry = std::string(implicit ? "halconv_mc_implicit_" : "halconv_mc_im2col_") +
                              (precision == Precision::f16   ? "f16"
                               : precision == Precision::f32 ? "f32"
                                                             : "f16f32");
    Halide::Func conv{implicit ? "implicit_gemm" : "im2col_gemm"};
    conv.define_extern(entry, args, types_of(precision).output, {n, x, y}, Halide::NameMangling::C,
                       Halide::DeviceAPI::CUDA);
    return conv;
}

}  // namespace

class Im2colValid : public Halide::Generator<Im2colValid> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f16f32, precision_names};
    GeneratorParam<Gemm> gemm{"gemm", Gemm::im2col, gemm_names};

    Input<Buffer<void, 3>> input{"input"};    // (c, x, y)
    Input<Buffer<void, 4>> kernel{"kernel"};  // (c, i, j, n)
    Input<bool> flip{"flip"};
    Output<Buffer<void, 3>> output{"output"};  // (n, x, y)

    void generate() {
        // ALGORITHM (the schedule is the extern stage's own)
        Var n{"n"}, x{"x"}, y{"y"};
        const bool implicit = gemm == Gemm::implicit;
        output = im2col_stage(get_target(), precision, implicit,
                              {input, kernel, flip, input.dim(0).min(), kernel.dim(0).extent()}, n, x, y);
    }
};

class Im2col : public Halide::Generator<Im2col> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f16f32, precision_names};
    GeneratorParam<Gemm> gemm{"gemm", Gemm::im2col, gemm_names};

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
        const bool implicit = gemm == Gemm::implicit;
        const Expr channels = kernel.dim(0).extent();
        Func shifted{"shifted"};
        // The extern stage becomes the output first: the fold test reads the output
        // buffer's bounds, which exist only once the output has its Func.
        const Expr pitch = implicit ? Halide::select(channels <= 2, 2, channels <= 4, 4, (channels + 7) / 8 * 8)
                                    : (channels + 3) / 4 * 4;
        output = im2col_stage(get_target(), precision, implicit, {shifted, kernel, flip, Expr(0), pitch}, n, x, y);
        const Expr near =
            reads_within_one_fold(input, output, kernel.dim(1).extent(), kernel.dim(2).extent(), offset_x, offset_y, 1);
        const Halide::Type storage = types_of(precision).storage;
        Func padded = extend_by_rule(input, boundary, Halide::cast(storage, fill), near, x, y, {c});
        // Channels past C read channel C-1 (kept inside the image) and are replaced by 0.
        const Expr image_c = input.dim(0).min() + Halide::min(c, channels - 1);
        shifted(c, x, y) =
            Halide::select(c < channels, padded(image_c, x - offset_x, y - offset_y), Halide::cast(storage, 0));

        // SCHEDULE
        sched::schedule_im2col_boundary_gpu(shifted, c, x, y);
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::Im2colValid, halconv_im2col_valid)
HALIDE_REGISTER_GENERATOR(halconv::gen::Im2col, halconv_im2col)
