// 2D cross-correlation by FFT (overlap-save), every boundary rule and any output
// placement, as conv2d (the same signature and semantics):
//
//   output(x, y) = sum_{i,j} kern(i, j) * padded(x + i - offset_x, y + j - offset_y)
//
// The output is cut into tiles of S_x x S_y = (T - kw + 1) x (T - kh + 1) outputs; tile
// (tx, ty) reads the T x T block of the extended image at (tx S_x, ty S_y), and the
// first S_x x S_y samples of the block's circular correlation with the kernel are the
// tile's outputs (the other samples wrap around). Two tiles side by side travel as one
// complex block (left + i right): the kernel is real, so the real and imaginary parts of
// the result are the two tiles' correlations, and each complex transform serves two
// tiles. Per pair of tiles:
//   forward transform of the columns (along y), transpose, forward transform of the rows,
//   times the kernel's spectrum, inverse of the rows, transpose, inverse of the columns.
// The spectrum is conj(DFT(kernel zero-padded to T x T)) / T^2 in the same digit-
// reversed order (fft.h), computed once per call; T (GeneratorParam tile) is fixed per
// pipeline, and the plan picks the pipeline whose T suits the kernel and the image.
//
// halconv_cufft / halconv_cufft_valid: the same algorithm on CUDA as cuFFT extern stages
// (runtime_kernels/fft/halconv_fft.h), composed as the tensor-core stages are: the valid form
// passes the image as it is; the other a Halide boundary stage's extended, shifted image
//   extended(x, y) = padded(x - offset_x, y - offset_y)
// over the output's region plus the kernel's halo, a second output (in the storage type)
// that the caller owns, so that a Plan allocates it once.
//
// Precision: f64 transforms for f64; f32 transforms for f32, f16f32 and f16 (half-
// precision transforms would lose the accuracy an FFT needs; the input is widened as it
// is read and the output rounded as it is written).
#include "Halide.h"
#include "contract.h"
#include "conv_common.h"
#include "fft.h"
#include "fft_schedules.h"
#include "tensor_core_schedules.h"

namespace halconv::gen {

class Fft : public Halide::Generator<Fft> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<int> tile{"tile", 128};  // T: the transform size, a power of two

    Input<Buffer<void, 2>> input{"input"};
    Input<Buffer<void, 2>> kernel{"kernel"};
    Input<int32_t> boundary{"boundary"};  // a halconv::Boundary value
    Input<double> fill{"fill"};           // value outside the image for Boundary::constant
    Input<int32_t> offset_x{"offset_x"};
    Input<int32_t> offset_y{"offset_y"};
    Input<bool> flip{"flip"};
    Output<Buffer<void, 2>> output{"output"};

    void generate() {
        require_types("fft", precision, input, kernel, output);
        const PrecisionTypes types = types_of(precision);
        const int T = tile;
        require(T >= 8 && (T & (T - 1)) == 0, "fft: tile must be a power of two >= 8");
        const Halide::Type work = precision == Precision::f64 ? Halide::Float(64) : Halide::Float(32);

        // ALGORITHM
        Var x{"x"}, y{"y"}, a{"a"}, b{"b"}, p{"p"}, ty{"ty"};
        const Expr k_width = kernel.dim(0).extent(), k_height = kernel.dim(1).extent();
        const Expr step_x = T - k_width + 1, step_y = T - k_height + 1;  // outputs per tile and axis
        const Expr out_x0 = output.dim(0).min(), out_y0 = output.dim(1).min();
        const Expr near = reads_within_one_fold(input, output, k_width, k_height, offset_x, offset_y);
        Func padded = extend_by_rule(input, boundary, Halide::cast(types.storage, fill), near, x, y);

        // Pair p of tiles in tile row ty: tiles 2p (real part) and 2p + 1 (imaginary).
        Func block{"block"};
        const Expr bx = out_x0 + 2 * p * step_x + a - offset_x, by = out_y0 + ty * step_y + b - offset_y;
        block(a, b, p, ty) = {Halide::cast(work, padded(bx, by)), Halide::cast(work, padded(bx + step_x, by))};

        // The kernel zero-padded to T x T (flipped for convolution), then its spectrum.
        Func taps = Halide::BoundaryConditions::constant_exterior(kernel, Halide::cast(types.storage, 0));
        Func padded_kernel{"padded_kernel"};
        padded_kernel(a, b) = {Halide::cast(work, kernel_tap(taps, kernel.dim(0).min(), k_width, kernel.dim(1).min(),
                                                             k_height, flip, a, b)),
                               Halide::cast(work, 0)};
        const Transforms2d spectrum = forward_2d(padded_kernel, T, work, 0, "kernel");
        Func spectrum_scaled{"spectrum"};
        const fft::Complex h = fft::complex_of(spectrum.result(b, a));
        const Expr scale = Halide::cast(work, Expr(1.0 / (double(T) * double(T))));
        spectrum_scaled(b, a) = fft::tuple(fft::conjugate({h.re * scale, h.im * scale}));

        const Transforms2d forward = forward_2d(block, T, work, 2, "image");
        Func product{"product"};
        product(b, a, p, ty) =
            fft::tuple(fft::complex_of(forward.result(b, a, p, ty)) * fft::complex_of(spectrum_scaled(b, a)));
        const Transforms2d inverse = inverse_2d(product, T, work, 2, "result");

        // Output (x, y) is sample (a, b) < (step_x, step_y) of tile (tx, ty); the clamps
        // change nothing but tell bounds inference that a tile reads only its own block.
        const Expr tx = (x - out_x0) / step_x, tyy = (y - out_y0) / step_y;
        const fft::Complex r =
            fft::complex_of(inverse.result(Halide::clamp(x - out_x0 - tx * step_x, 0, T - 1),
                                           Halide::clamp(y - out_y0 - tyy * step_y, 0, T - 1), tx / 2, tyy));
        output(x, y) = Halide::cast(types.output, Halide::select(tx % 2 == 0, r.re, r.im));

        // SCHEDULE
        sched::FftStages stages{.output = output,
                                .x = x,
                                .y = y,
                                .step_x = step_x,
                                .step_y = step_y,
                                .spectrum = spectrum_scaled,
                                .transforms = {spectrum.first, spectrum.second, forward.first, forward.second,
                                               inverse.first, inverse.second},
                                .transposes = {spectrum.transpose, forward.transpose, inverse.transpose},
                                .kernel_transforms = 2,
                                .tile = T,
                                .work = work,
                                .target = get_target()};
        sched::schedule_fft_cpu(stages);
    }

private:
    // A 2D transform: `first` along dimension 1 of the input (vectorized across 0), a
    // transpose, `second` along the input's dimension 0. `result` is indexed with the
    // dimensions swapped: result(k1, k0, rest...).
    struct Transforms2d {
        fft::Transform first, second;
        Func transpose, result;
    };

    static Transforms2d forward_2d(const Func &f, int T, Halide::Type work, int rest, const std::string &name) {
        Transforms2d t;
        t.first = fft::transform(f, T, -1, work, rest, name + "_col");
        t.transpose = transposed(t.first.result(), rest, name + "_transpose");
        t.second = fft::transform(t.transpose, T, -1, work, rest, name + "_row");
        t.result = t.second.result();
        return t;
    }

    // The inverse of forward_2d's order: the rows (dimension 1 of f) first, transpose,
    // then the columns; result(a, b, rest...) in natural order.
    static Transforms2d inverse_2d(const Func &f, int T, Halide::Type work, int rest, const std::string &name) {
        Transforms2d t;
        t.first = fft::transform(f, T, +1, work, rest, name + "_row");
        t.transpose = transposed(t.first.result(), rest, name + "_transpose");
        t.second = fft::transform(t.transpose, T, +1, work, rest, name + "_col");
        t.result = t.second.result();
        return t;
    }

    static Func transposed(const Func &f, int rest, const std::string &name) {
        Func t{name};
        std::vector<Var> args{Var("u"), Var("v")};
        for (int d = 0; d < rest; d++) {
            args.emplace_back(name + "_r" + std::to_string(d));
        }
        std::vector<Expr> at{args[1], args[0]};
        at.insert(at.end(), args.begin() + 2, args.end());
        t(args) = f(at);
        return t;
    }
};

enum class FftForm { overlap_save };
inline const std::map<std::string, FftForm> fft_form_names = {{"overlap_save", FftForm::overlap_save}};

// The cuFFT extern stage of a form and precision: halconv_fft_<form>_<precision>.
inline Halide::Func cufft_stage(const Halide::Target &target, FftForm form, Precision precision,
                                const std::vector<Halide::ExternFuncArgument> &args, const Halide::Var &x,
                                const Halide::Var &y) {
    require(target.has_feature(Halide::Target::CUDA), "cufft: the extern stage needs a CUDA target");
    Halide::Func conv{"cufft"};
    conv.define_extern(rk::contract::fft_entry(name_in(fft_form_names, form), precision_name(precision)), args,
                       types_of(precision).output, {x, y}, Halide::NameMangling::C, Halide::DeviceAPI::CUDA);
    return conv;
}

class CufftValid : public Halide::Generator<CufftValid> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<FftForm> form{"form", FftForm::overlap_save, fft_form_names};

    Input<Buffer<void, 2>> input{"input"};
    Input<Buffer<void, 2>> kernel{"kernel"};
    Input<bool> flip{"flip"};
    Output<Buffer<void, 2>> output{"output"};

    void generate() {
        // ALGORITHM (the schedule is the extern stage's own)
        Var x{"x"}, y{"y"};
        output = cufft_stage(get_target(), form, precision, {input, kernel, flip}, x, y);
    }
};

class Cufft : public Halide::Generator<Cufft> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<FftForm> form{"form", FftForm::overlap_save, fft_form_names};

    Input<Buffer<void, 2>> input{"input"};
    Input<Buffer<void, 2>> kernel{"kernel"};
    Input<int32_t> boundary{"boundary"};  // a halconv::Boundary value
    Input<double> fill{"fill"};           // value outside the image for Boundary::constant
    Input<int32_t> offset_x{"offset_x"};
    Input<int32_t> offset_y{"offset_y"};
    Input<bool> flip{"flip"};
    Output<Buffer<void, 2>> output{"output"};
    Output<Buffer<void, 2>> extended{"extended"};  // the image the extern stage reads

    void generate() {
        require_types("cufft", precision, input, kernel, output);
        const PrecisionTypes types = types_of(precision);
        // ALGORITHM
        Var x{"x"}, y{"y"};
        output = cufft_stage(get_target(), form, precision, {Func(extended), kernel, flip}, x, y);
        Func shifted = extended_for_extern(input, output, kernel, boundary, Halide::cast(types.storage, fill), offset_x,
                                           offset_y, x, y);
        extended(x, y) = shifted(x, y);

        // SCHEDULE
        sched::schedule_extended_image_gpu(extended, x, y);
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::Fft, halconv_fft)
HALIDE_REGISTER_GENERATOR(halconv::gen::CufftValid, halconv_cufft_valid)
HALIDE_REGISTER_GENERATOR(halconv::gen::Cufft, halconv_cufft)
