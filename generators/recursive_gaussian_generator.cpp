// The recursive Gaussian (gaussian_blur with GaussianMethod::recursive): along each axis
// Deriche's parallel form with three complex poles, a causal and an anticausal
// first-order recursion per pole summed, started from the states the boundary rule's
// infinite extension leaves at the line's ends (runtime_kernels/recursive/
// recursive_layout.h gives the definition and the coefficient layout). Cost per sample
// is independent of sigma. The column pass runs first, then the row pass, each as a
// recursion down columns followed by a transpose (Halide's apps/iir_blur).
//
// halconv_recursive_gaussian_cuda: the same definition as a hand-written extern stage
// (runtime_kernels/recursive/halconv_rg.h), which splits each line into segments so that
// a GPU has a thread per 64 samples rather than one per line.
#include <array>
#include <map>

#include "Halide.h"
#include "contract.h"
#include "conv_common.h"
#include "recursive/recursive_layout.h"
#include "recursive_gaussian_schedules.h"

namespace halconv::gen {

using Halide::Expr;
using Halide::Func;
using Halide::RDom;
using Halide::Tuple;
using Halide::Var;

namespace {

struct Complex {
    Expr re, im;
};
Complex operator*(const Complex &a, const Complex &b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
Complex operator*(const Complex &a, const Expr &r) {
    return {a.re * r, a.im * r};
}
Complex operator+(const Complex &a, const Complex &b) {
    return {a.re + b.re, a.im + b.im};
}
Complex operator+(const Complex &a, const Expr &r) {
    return {a.re + r, a.im};
}

using PoleValues = std::array<Complex, rk::rg::poles>;

Tuple tuple_of(const PoleValues &v) {
    std::vector<Expr> parts;
    for (const Complex &c : v) {
        parts.push_back(c.re);
        parts.push_back(c.im);
    }
    return Tuple(parts);
}

// Pole k's complex value of a Tuple-valued call made by tuple_of.
Complex pole_of(const Halide::FuncRef &ref, int k) {
    return {Halide::Expr(ref[2 * k]), Halide::Expr(ref[2 * k + 1])};
}

}  // namespace

class RecursiveGaussian : public Halide::Generator<RecursiveGaussian> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<std::string> schedule{"schedule", "cpu_strips"};  // a name of sched::recursive_gaussian_schedules()

    Input<Buffer<void, 2>> input{"input"};
    Input<Buffer<double, 2>> coefficients{"coefficients"};  // (i, axis): recursive_layout.h
    Input<Buffer<double, 3>> powers{"powers"};              // (2 k + part, i, axis)
    Input<int32_t> boundary{"boundary"};
    Input<double> fill{"fill"};
    Output<Buffer<void, 2>> output{"output"};

    void generate() {
        require_types("recursive_gaussian", precision, input, input, output);
        require(precision != Precision::f16, "recursive_gaussian: f16 arithmetic cannot carry the recursion");
        const PrecisionTypes types = types_of(precision);
        acc_ = types.accumulator;

        // ALGORITHM
        Var x{"x"}, y{"y"};
        const Expr x0 = input.dim(0).min(), y0 = input.dim(1).min();
        const Expr width = input.dim(0).extent(), height = input.dim(1).extent();
        Func image{"image"};
        image(x, y) = Halide::cast(acc_, input(x + x0, y + y0));
        const Expr fill_value = Halide::cast(acc_, Halide::cast(types.storage, fill));
        // Columns first (axis 1), then rows (axis 0): each pass leaves its result transposed.
        sched::RecursiveGaussianStages stages;
        Func columns = down_columns_transposed(image, height, 1, fill_value, stages.column_pass);
        Func rows = down_columns_transposed(columns, width, 0, fill_value, stages.row_pass);
        output(x, y) = Halide::cast(types.output, rows(x - x0, y - y0));

        // SCHEDULE
        stages.output = output;
        stages.x = x;
        stages.y = y;
        stages.target = get_target();
        stages.accumulator = acc_;
        sched::apply_schedule(sched::recursive_gaussian_schedules(), schedule, stages, "recursive_gaussian");
    }

private:
    Halide::Type acc_;

    Expr coefficient(int k, rk::rg::Value v, int part, int axis) {
        return Halide::cast(acc_, coefficients(rk::rg::coefficient_index(k, v, part), axis));
    }
    Complex value(int k, rk::rg::Value v, int axis) { return {coefficient(k, v, 0, axis), coefficient(k, v, 1, axis)}; }
    Complex power(int k, const Expr &i, int axis) {
        const Expr at = Halide::min(i, powers.dim(1).extent() - 1);
        return {Halide::cast(acc_, powers(2 * k, at, axis)), Halide::cast(acc_, powers(2 * k + 1, at, axis))};
    }

    // The filter along y of `in` (x, y), lines of `length` samples, axis `axis`'s
    // coefficients; the result transposed: result(y, x).
    Func down_columns_transposed(Func in, const Expr &length, int axis, const Expr &fill_value,
                                 sched::RecursivePass &pass) {
        Var x{"x"}, y{"y"};
        using Boundary = halconv::Boundary;
        // Mirror along a one-sample axis is nearest (recursive_layout.h).
        const Expr rule =
            Halide::select(boundary == int(Boundary::mirror) && length == 1, int(Boundary::nearest), boundary);
        const Expr periodic =
            rule == int(Boundary::wrap) || rule == int(Boundary::reflect) || rule == int(Boundary::mirror);
        const Expr shift = Halide::select(rule == int(Boundary::mirror), 1, 0);

        // head and tail (recursive_layout.h): sums over the line, only for the periodic rules.
        RDom r(0, Halide::select(periodic, length - shift, 0), "r");
        Func ends{"ends"};
        ends(x) = Tuple(std::vector<Expr>(4 * rk::rg::poles, Halide::cast(acc_, 0)));
        {
            std::vector<Expr> sums;
            const Expr head_sample = in(x, r + shift), tail_sample = in(x, r);
            for (int k = 0; k < rk::rg::poles; k++) {
                const Complex h = power(k, r, axis) * head_sample;
                sums.push_back(ends(x)[2 * k] + h.re);
                sums.push_back(ends(x)[2 * k + 1] + h.im);
            }
            for (int k = 0; k < rk::rg::poles; k++) {
                const Complex t = power(k, length - 1 - shift - r, axis) * tail_sample;
                sums.push_back(ends(x)[2 * rk::rg::poles + 2 * k] + t.re);
                sums.push_back(ends(x)[2 * rk::rg::poles + 2 * k + 1] + t.im);
            }
            ends(x) = Tuple(sums);
        }

        // The states at the line's ends: S_k before the first sample, T_k after the last.
        Func start{"start"}, finish{"finish"};
        PoleValues s, t;
        for (int k = 0; k < rk::rg::poles; k++) {
            const Complex g = value(k, rk::rg::gain, axis), wh = value(k, rk::rg::head_weight, axis),
                          wt = value(k, rk::rg::tail_weight, axis);
            const Complex head = {ends(x)[2 * k], ends(x)[2 * k + 1]};
            const Complex tail = {ends(x)[2 * rk::rg::poles + 2 * k], ends(x)[2 * rk::rg::poles + 2 * k + 1]};
            const Complex periodic_s = g * (wh * head + wt * tail), periodic_t = g * (wh * tail + wt * head);
            const Complex near_s = g * in(x, 0), near_t = g * in(x, length - 1), constant = g * fill_value;
            const auto pick = [&](const Complex &p, const Complex &n, const Complex &c) {
                return Complex{Halide::select(periodic, p.re, rule == int(Boundary::nearest), n.re, c.re),
                               Halide::select(periodic, p.im, rule == int(Boundary::nearest), n.im, c.im)};
            };
            s[size_t(k)] = pick(periodic_s, near_s, constant);
            t[size_t(k)] = pick(periodic_t, near_t, constant);
        }
        start(x) = tuple_of(s);
        finish(x) = tuple_of(t);

        RDom down(1, length - 1, "down"), up(1, length - 1, "up");
        // Causal: Y[n] = x[n] + p Y[n-1], Y[-1] = S.
        Func causal{"causal"};
        std::vector<Expr> undefs(2 * rk::rg::poles, Halide::undef(acc_));
        causal(x, y) = Tuple(undefs);
        {
            PoleValues first;
            for (int k = 0; k < rk::rg::poles; k++) {
                first[size_t(k)] = value(k, rk::rg::pole, axis) * pole_of(start(x), k) + in(x, 0);
            }
            causal(x, 0) = tuple_of(first);
            PoleValues next;
            for (int k = 0; k < rk::rg::poles; k++) {
                next[size_t(k)] = value(k, rk::rg::pole, axis) * pole_of(causal(x, down - 1), k) + in(x, down);
            }
            causal(x, down) = tuple_of(next);
        }
        // Anticausal: W[n] = p (x[n+1] + W[n+1]), W[N-1] = p T.
        Func anticausal{"anticausal"};
        anticausal(x, y) = Tuple(undefs);
        {
            PoleValues last;
            for (int k = 0; k < rk::rg::poles; k++) {
                last[size_t(k)] = value(k, rk::rg::pole, axis) * pole_of(finish(x), k);
            }
            anticausal(x, length - 1) = tuple_of(last);
            const Expr n = length - 1 - up;
            PoleValues next;
            for (int k = 0; k < rk::rg::poles; k++) {
                next[size_t(k)] = value(k, rk::rg::pole, axis) * (pole_of(anticausal(x, n + 1), k) + in(x, n + 1));
            }
            anticausal(x, n) = tuple_of(next);
        }
        Func filtered{"filtered"};
        Expr sum = Halide::cast(acc_, 0);
        for (int k = 0; k < rk::rg::poles; k++) {
            const Complex a = value(k, rk::rg::weight, axis);
            const Complex both = a * (pole_of(causal(x, y), k) + pole_of(anticausal(x, y), k));
            sum = sum + 2 * both.re;
        }
        filtered(x, y) = sum;
        Func transposed{"transposed"};
        transposed(x, y) = filtered(y, x);

        pass = {.transposed = transposed,
                .filtered = filtered,
                .causal = causal,
                .anticausal = anticausal,
                .ends = ends,
                .start = start,
                .finish = finish,
                .x = x,
                .y = y,
                .over_line = r,
                .down = down,
                .up = up};
        return transposed;
    }
};

enum class RecursiveForm { segments };
inline const std::map<std::string, RecursiveForm> recursive_form_names = {{"segments", RecursiveForm::segments}};

class RecursiveGaussianCuda : public Halide::Generator<RecursiveGaussianCuda> {
public:
    GeneratorParam<Precision> precision{"precision", Precision::f32, precision_names};
    GeneratorParam<RecursiveForm> form{"form", RecursiveForm::segments, recursive_form_names};

    Input<Buffer<void, 2>> input{"input"};
    Input<Buffer<double, 2>> coefficients{"coefficients"};
    Input<Buffer<double, 3>> powers{"powers"};
    Input<int32_t> boundary{"boundary"};
    Input<double> fill{"fill"};
    Output<Buffer<void, 2>> output{"output"};

    void generate() {
        require_types("recursive_gaussian_cuda", precision, input, input, output);
        require(precision != Precision::f16, "recursive_gaussian_cuda: f16 arithmetic cannot carry the recursion");
        require(get_target().has_feature(Halide::Target::CUDA),
                "recursive_gaussian_cuda: the extern stage needs a CUDA target");
        // ALGORITHM (the schedule is the extern stage's own)
        Var x{"x"}, y{"y"};
        Func blurred{"recursive_gaussian_" + name_in(recursive_form_names, RecursiveForm(form))};
        blurred.define_extern(rk::contract::recursive_gaussian_entry(name_in(recursive_form_names, RecursiveForm(form)),
                                                                     precision_name(precision)),
                              {input, coefficients, powers, boundary, fill}, types_of(precision).output, {x, y},
                              Halide::NameMangling::C, Halide::DeviceAPI::CUDA);
        output = blurred;
    }
};

}  // namespace halconv::gen

HALIDE_REGISTER_GENERATOR(halconv::gen::RecursiveGaussian, halconv_recursive_gaussian)
HALIDE_REGISTER_GENERATOR(halconv::gen::RecursiveGaussianCuda, halconv_recursive_gaussian_cuda)
