// Pieces of the algorithm shared by the convolution generators: element types per
// precision, the boundary rules and the (optionally flipped) kernel.
#pragma once

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "Halide.h"
#include "halconv/types.h"

namespace halconv::gen {

inline const std::map<std::string, Precision> precision_names = {
    {"f64", Precision::f64},
    {"f32", Precision::f32},
    {"f16", Precision::f16},
    {"f16f32", Precision::f16f32},
};

// The name a GeneratorParam's enum map gives `value` (entry points and pipelines are
// named by it).
template <typename Enum>
std::string name_in(const std::map<std::string, Enum> &names, Enum value) {
    for (const auto &[name, v] : names) {
        if (v == value) {
            return name;
        }
    }
    return {};
}

inline std::string precision_name(Precision p) {
    return name_in(precision_names, p);
}

// Generator-time check: a mismatch is a build error, reported with its reason.
inline void require(bool ok, const std::string &what) {
    if (!ok) {
        throw std::invalid_argument("halconv generator: " + what);
    }
}

struct PrecisionTypes {
    Halide::Type storage;      // input and kernel
    Halide::Type accumulator;  // products and sums
    Halide::Type output;
};

inline PrecisionTypes types_of(Precision p) {
    switch (p) {
        case Precision::f64:
            return {Halide::Float(64), Halide::Float(64), Halide::Float(64)};
        case Precision::f32:
            return {Halide::Float(32), Halide::Float(32), Halide::Float(32)};
        case Precision::f16:
            return {Halide::Float(16), Halide::Float(16), Halide::Float(16)};
        case Precision::f16f32:
            return {Halide::Float(16), Halide::Float(32), Halide::Float(32)};
    }
    return {};
}

// Generator-time check that the buffers' types are the precision's (the registry sets
// them from it: cmake/halconv_registry.cmake, TYPED). `who` names the generator.
template <typename Image, typename Kernel, typename Out>
void require_types(const std::string &who, Precision precision, const Image &input, const Kernel &kernel,
                   const Out &output) {
    const PrecisionTypes types = types_of(precision);
    require(input.type() == types.storage && kernel.type() == types.storage && output.type() == types.output,
            who + ": buffer types do not match the precision");
}

// select() that evaluates only the taken side. Boundary remapping costs integer
// divisions; as a real branch it is paid only by the few out-of-image samples, and
// the rule, being uniform, never diverges a warp.
inline Halide::Expr lazy_select(const Halide::Expr &c, const Halide::Expr &t, const Halide::Expr &f) {
    using namespace Halide::Internal;
    return Call::make(t.type(), Call::if_then_else, {c, t, f}, Call::PureIntrinsic);
}

// The batch's image variable (after x and y) of a batch form's Funcs, none for one image.
inline std::vector<Halide::Var> batch_vars(bool batch) {
    return batch ? std::vector<Halide::Var>{Halide::Var{"n"}} : std::vector<Halide::Var>{};
}

// A Func's arguments `args` followed by the batch's variables.
template <typename T>
std::vector<T> with_batch(std::vector<T> args, const std::vector<Halide::Var> &batch) {
    args.insert(args.end(), batch.begin(), batch.end());
    return args;
}

// Image index (0..n-1) that position i (relative to the image's first sample) reads
// under each rule. `near` promises -n < i < 2n-1 for every i of the call: one fold at
// most, a few branch-free selects, so GPU staging loops can keep many loads in flight.
// Otherwise (a kernel wider than the image) the general rule folds any distance; each
// modulus appears once there, since Halide's CSE would lift a repeated one out of the
// lazy branch and pay the integer division for every sample. The outer clamp (or, with
// likely_inside, promise) is a no-op that tells bounds inference the access never leaves
// the image.
// `likely_inside` marks the inside of the image as the likely case, so that Halide splits
// a loop over the axis into its edges and an inside that reads plain samples: dense
// vector loads on the CPU, where the selects would otherwise make every vector a gather.
// (GPU schedules leave it off: a thread reads one sample, and the split only adds code.)
inline Halide::Expr remap_index(const Halide::Expr &i, const Halide::Expr &n, const Halide::Expr &rule,
                                const Halide::Expr &near, bool likely_inside = false) {
    using Halide::Expr;
    using Halide::select;
    const Expr two_n = 2 * n;
    const Expr reflect = rule == int(Boundary::reflect), mirror = rule == int(Boundary::mirror),
               wrap = rule == int(Boundary::wrap);
    // Within one fold every rule is affine in i on each side of the image, with the
    // same slope on both: a few loop-invariant coefficients, two multiply-adds.
    const Expr slope = select(reflect || mirror, -1, wrap, 1, 0);
    const Expr below = select(reflect, -1, wrap, n, 0);
    const Expr above = select(reflect, two_n - 1, mirror, two_n - 2, wrap, -n, n - 1);
    const Expr one_fold =
        select(i < 0, below + slope * i, i >= n, above + slope * i, likely_inside ? Halide::likely(i) : i);

    const auto iabs = [](const Expr &e) { return Halide::cast<int32_t>(Halide::abs(e)); };
    // Halide's % is Euclidean (never negative). reflect: r = i mod 2n folds to r for
    // r < n and to 2n-1-r above, i.e. (2n-1 - |2r - (2n-1)|) / 2; mirror: period 2n-2
    // (1 for n = 1), m = i mod period folds at n-1.
    const Expr any_reflect = (two_n - 1 - iabs(2 * (i % two_n) - (two_n - 1))) / 2;
    const Expr any_mirror = (n - 1) - iabs(i % Halide::max(two_n - 2, 1) - (n - 1));
    const Expr any_wrap = i % n;
    const Expr nearest = Halide::clamp(i, 0, n - 1);
    const Expr outside_rule =
        lazy_select(reflect, any_reflect, lazy_select(mirror, any_mirror, lazy_select(wrap, any_wrap, nearest)));
    const Expr any_fold = lazy_select(i >= 0 && i < n, i, outside_rule);
    // Where the inside is likely, the bound is promised rather than clamped: every branch
    // already lies in [0, n) (one_fold wherever `near` holds, as its callers compute it),
    // and a clamp would keep the inside's loads from being dense vectors.
    const Expr index = lazy_select(near, one_fold, any_fold);
    return likely_inside ? Halide::unsafe_promise_clamped(index, 0, n - 1) : Halide::clamp(index, 0, n - 1);
}

// Whether every position a call reads stays within one fold of the input (the
// `near` of remap_index): on each axis [out_min - offset, out_max + k - 1 - offset],
// relative to the input's first sample, lies in (-n, 2n - 1).
// x and y are dimensions x_dim and x_dim + 1 of both buffers (1 for channels-first images).
template <typename In, typename Out>
Halide::Expr reads_within_one_fold(const In &input, const Out &output, const Halide::Expr &k_width,
                                   const Halide::Expr &k_height, const Halide::Expr &offset_x,
                                   const Halide::Expr &offset_y, int x_dim = 0) {
    const auto axis = [&](int d, const Halide::Expr &k, const Halide::Expr &offset) {
        const Halide::Expr n = input.dim(d).extent();
        const Halide::Expr lo = output.dim(d).min() - offset - input.dim(d).min();
        const Halide::Expr hi = output.dim(d).max() + k - 1 - offset - input.dim(d).min();
        return lo > -n && hi < 2 * n - 1;
    };
    return axis(x_dim, k_width, offset_x) && axis(x_dim + 1, k_height, offset_y);
}

// The input extended to the whole plane by a boundary rule, without a padded copy;
// `near` and `likely_inside` as for remap_index, for both axes. `leading` names the
// dimensions before x and y (the channel of a channels-innermost image), `trailing` those
// after them (the image of a batch); neither is extended.
template <typename In>
Halide::Func extend_by_rule(const In &input, const Halide::Expr &rule, const Halide::Expr &fill,
                            const Halide::Expr &near, const Halide::Var &x, const Halide::Var &y,
                            const std::vector<Halide::Var> &leading = {}, bool likely_inside = false,
                            const std::vector<Halide::Var> &trailing = {}) {
    using Halide::Expr;
    const int d = static_cast<int>(leading.size());
    const Expr x_min = input.dim(d).min(), width = input.dim(d).extent();
    const Expr y_min = input.dim(d + 1).min(), height = input.dim(d + 1).extent();
    Halide::Func padded{"padded"};
    const Expr xr = remap_index(x - x_min, width, rule, near, likely_inside) + x_min;
    const Expr yr = remap_index(y - y_min, height, rule, near, likely_inside) + y_min;
    const Expr outside = x < x_min || x >= x_min + width || y < y_min || y >= y_min + height;
    std::vector<Halide::Var> vars(leading);
    std::vector<Expr> at(leading.begin(), leading.end());
    vars.insert(vars.end(), {x, y});
    at.insert(at.end(), {xr, yr});
    vars = with_batch(vars, trailing);
    at = with_batch(at, trailing);
    const Expr sample = input(at);
    padded(vars) = Halide::select(rule == int(Boundary::constant) && outside, fill,
                                  likely_inside ? Halide::likely(sample) : sample);
    return padded;
}

// What a valid-mode extern stage reads for a mode's output (the tensor-core and cuFFT
// pipelines): the input extended by `rule` and shifted by the mode's offsets; `batch`
// names the image of a batch (x, y, n), empty for one image. Call it once the extern
// stage is the output: the fold test reads the output buffer's bounds.
template <typename In, typename Out, typename Kernel>
Halide::Func extended_for_extern(const In &input, const Out &output, const Kernel &kernel, const Halide::Expr &rule,
                                 const Halide::Expr &fill, const Halide::Expr &offset_x, const Halide::Expr &offset_y,
                                 const Halide::Var &x, const Halide::Var &y,
                                 const std::vector<Halide::Var> &batch = {}) {
    const Halide::Expr k_width = kernel.dim(0).extent(), k_height = kernel.dim(1).extent();
    const Halide::Expr near = reads_within_one_fold(input, output, k_width, k_height, offset_x, offset_y);
    Halide::Func padded = extend_by_rule(input, rule, fill, near, x, y, {}, false, batch);
    Halide::Func shifted{"shifted"};
    shifted(with_batch<Halide::Var>({x, y}, batch)) =
        padded(with_batch<Halide::Expr>({x - offset_x, y - offset_y}, batch));
    return shifted;
}

// Kernel coefficient (i, j) counted from the kernel's first sample; flip = true turns
// correlation into convolution.
inline Halide::Expr kernel_tap(const Halide::Func &kernel, const Halide::Expr &k_min_x, const Halide::Expr &k_width,
                               const Halide::Expr &k_min_y, const Halide::Expr &k_height, const Halide::Expr &flip,
                               const Halide::Expr &i, const Halide::Expr &j) {
    return kernel(k_min_x + Halide::select(flip, k_width - 1 - i, i),
                  k_min_y + Halide::select(flip, k_height - 1 - j, j));
}

}  // namespace halconv::gen
