// Pieces of the algorithm shared by the convolution generators: element types per
// precision, the boundary rules and the (optionally flipped) kernel.
#pragma once

#include "Halide.h"
#include "halconv/types.h"

#include <map>
#include <stdexcept>
#include <string>

namespace halconv::gen {

inline const std::map<std::string, Precision> precision_names = {
    {"f64", Precision::f64},
    {"f32", Precision::f32},
    {"f16", Precision::f16},
    {"f16f32", Precision::f16f32},
};

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

// select() that evaluates only the taken side. Boundary remapping costs integer
// divisions; as a real branch it is paid only by the few out-of-image samples, and
// the rule, being uniform, never diverges a warp.
inline Halide::Expr lazy_select(const Halide::Expr &c, const Halide::Expr &t, const Halide::Expr &f) {
    using namespace Halide::Internal;
    return Call::make(t.type(), Call::if_then_else, {c, t, f}, Call::PureIntrinsic);
}

// Image index (0..n-1) that position i (relative to the image's first sample) reads
// under each rule, for any distance from the image. The outer clamp is a no-op that
// tells bounds inference the access never leaves the image.
inline Halide::Expr remap_index(const Halide::Expr &i, const Halide::Expr &n, const Halide::Expr &rule) {
    using Halide::Expr;
    const Expr two_n = 2 * n;
    const Expr r = i % two_n;  // Halide's % is Euclidean: never negative
    const Expr reflect = Halide::select(r < n, r, two_n - 1 - r);
    const Expr mirror_period = Halide::max(two_n - 2, 1);
    const Expr m = i % mirror_period;
    const Expr mirror = Halide::select(m < n, m, mirror_period - m);
    const Expr wrap = i % n;
    const Expr nearest = Halide::clamp(i, 0, n - 1);
    const Expr outside_rule = lazy_select(
        rule == int(Boundary::reflect), reflect,
        lazy_select(rule == int(Boundary::mirror), mirror,
                    lazy_select(rule == int(Boundary::wrap), wrap, nearest)));
    const Expr inside = i >= 0 && i < n;
    return Halide::clamp(lazy_select(inside, i, outside_rule), 0, n - 1);
}

// The image extended to the whole plane by a boundary rule, without a padded copy.
inline Halide::Func extend_by_rule(const Halide::Func &image, const Halide::Expr &x_min,
                                   const Halide::Expr &width, const Halide::Expr &y_min,
                                   const Halide::Expr &height, const Halide::Expr &rule,
                                   const Halide::Expr &fill, const Halide::Var &x, const Halide::Var &y) {
    using Halide::Expr;
    Halide::Func padded{"padded"};
    const Expr xr = remap_index(x - x_min, width, rule) + x_min;
    const Expr yr = remap_index(y - y_min, height, rule) + y_min;
    const Expr outside = x < x_min || x >= x_min + width || y < y_min || y >= y_min + height;
    padded(x, y) = Halide::select(rule == int(Boundary::constant) && outside, fill, image(xr, yr));
    return padded;
}

// Kernel coefficient (i, j) counted from the kernel's first sample; flip = true turns
// correlation into convolution.
inline Halide::Expr kernel_tap(const Halide::Func &kernel, const Halide::Expr &k_min_x,
                               const Halide::Expr &k_width, const Halide::Expr &k_min_y,
                               const Halide::Expr &k_height, const Halide::Expr &flip,
                               const Halide::Expr &i, const Halide::Expr &j) {
    return kernel(k_min_x + Halide::select(flip, k_width - 1 - i, i),
                  k_min_y + Halide::select(flip, k_height - 1 - j, j));
}

}  // namespace halconv::gen
