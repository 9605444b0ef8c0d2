// Fast Fourier transforms of a fixed power-of-two size as Halide Funcs: the algorithm
// library of the FFT convolution (fft_generator.cpp).
//
// A complex Func is a Func of Tuple(re, im). transform() computes the unnormalized DFT
// of dimension 1 of such a Func f(i, k, rest...), k in [0, n), for every i and rest:
// each stage is a Func to schedule, computed over all of [0, n), and the transform is
// meant to be vectorized across i (dimension 0), so every load and store of a stage is a
// dense vector.
//
//   forward  (sign -1): decimation in frequency, radix 4 (radix 2 once when log2 n is
//            odd). Natural order in, the stages' digit-reversed order out.
//   inverse  (sign +1): decimation in time, the mirror image: the forward's order in,
//            natural order out, so inverse(forward(x)) = n x with no reordering pass.
//
// A pointwise product between the two (a convolution) needs neither order to be
// natural, only the same order in both operands: compute both with forward().
//
// Stage s with sub-size q and radix r reads elements base + l + j q (j < r) of a block
// of r q elements and writes elements base + l + t q: a Func stage(i, k, rest...) with
// k = blk r q + t q + l (l < q, t < r). Its pure definition selects among the r outputs
// by t = (k / q) % r; scheduled with k split into (blk, t, l) and t unrolled, the
// selects fold away and the r outputs share their loads and sums.
#pragma once

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "Halide.h"

namespace halconv::gen::fft {

struct Complex {
    Halide::Expr re, im;
};

inline Complex operator+(const Complex &a, const Complex &b) {
    return {a.re + b.re, a.im + b.im};
}
inline Complex operator-(const Complex &a, const Complex &b) {
    return {a.re - b.re, a.im - b.im};
}
inline Complex operator*(const Complex &a, const Complex &b) {
    return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
// a * (s i) for s = +-1, without multiplications.
inline Complex times_i(const Complex &a, int s) {
    return s > 0 ? Complex{-a.im, a.re} : Complex{a.im, -a.re};
}
inline Complex conjugate(const Complex &a) {
    return {a.re, -a.im};
}
inline Halide::Tuple tuple(const Complex &a) {
    return {a.re, a.im};
}
inline Complex complex_of(const Halide::FuncRef &ref) {
    const Halide::Tuple t(ref);
    return {t[0], t[1]};
}

// exp(sign 2 pi i j / n) for j in [0, n), in `type`, as a table (compute it once).
inline Halide::Func twiddles(int n, int sign, Halide::Type type, const std::string &name) {
    Halide::Var j{"j"};
    Halide::Func w{name};
    const Halide::Expr angle = Halide::cast<double>(j) * Halide::Expr(sign * 2.0 * M_PI / n);
    w(j) = {Halide::cast(type, Halide::cos(angle)), Halide::cast(type, Halide::sin(angle))};
    return w;
}

// One stage as built: its Func, pure variables and shape (the schedule's handles).
struct Stage {
    Halide::Func func;
    Halide::Var i, k;
    int q = 1, radix = 2, n = 1;
};

struct Transform {
    std::vector<Stage> stages;  // in the order they run; the last is the result,
                                // a complex Func of (i, k, rest...)
    Halide::Func twiddle;       // the stages' table (schedule: compute_root)

    Halide::Func result() const { return stages.back().func; }
};

namespace detail {

// Element k of dimension 1 of a complex Func of (i, k, rest...).
inline Complex element(const Halide::Func &f, const Halide::Expr &i, const Halide::Expr &k,
                       const std::vector<Halide::Var> &rest) {
    std::vector<Halide::Expr> at{i, k};
    at.insert(at.end(), rest.begin(), rest.end());
    return complex_of(f(at));
}

inline Halide::Expr select_of(const Halide::Expr &t, const std::vector<Halide::Expr> &values) {
    Halide::Expr e = values.back();
    for (int v = static_cast<int>(values.size()) - 2; v >= 0; v--) {
        e = Halide::select(t == v, values[v], e);
    }
    return e;
}

}  // namespace detail

// The DFT of dimension 1 (k in [0, n)) of the complex Func `f` of (i, k, rest...),
// rest.size() further dimensions: forward (sign -1) or inverse (sign +1), as described
// at the top. n must be a power of two >= 2.
inline Transform transform(const Halide::Func &f, int n, int sign, Halide::Type type, int rest,
                           const std::string &name) {
    if (n < 2 || (n & (n - 1)) != 0) {
        throw std::invalid_argument("fft::transform: n must be a power of two >= 2");
    }
    Transform out;
    out.twiddle = twiddles(n, sign, type, name + "_twiddle");
    std::vector<Halide::Var> rest_vars;
    for (int d = 0; d < rest; d++) {
        rest_vars.emplace_back(name + "_r" + std::to_string(d));
    }
    // Sub-sizes of the forward stages: blocks of n, n/4, ... (radix 4), then 2 if needed.
    std::vector<std::pair<int, int>> plan;  // (q, radix)
    int block = n;
    while (block >= 4) {
        plan.push_back({block / 4, 4});
        block /= 4;
    }
    if (block == 2) {
        plan.push_back({1, 2});
    }
    if (sign > 0) {
        std::reverse(plan.begin(), plan.end());
    }
    Halide::Func in = f;
    const auto tw = [&](const Halide::Expr &e) { return complex_of(out.twiddle(e)); };
    for (size_t s = 0; s < plan.size(); s++) {
        const auto [q, r] = plan[s];
        Stage st;
        st.i = Halide::Var(name + "_i");
        st.k = Halide::Var(name + "_k");
        st.q = q;
        st.radix = r;
        st.n = n;
        st.func = Halide::Func(name + "_s" + std::to_string(s));
        const Halide::Expr l = st.k % q, t = (st.k / q) % r, blk = st.k / (r * q);
        const Halide::Expr base = blk * (r * q) + l;
        std::vector<Complex> x;
        for (int j = 0; j < r; j++) {
            x.push_back(detail::element(in, st.i, base + j * q, rest_vars));
        }
        // Twiddle of exponent m l for a block of r q: table entry m l n / (r q).
        const int step = n / (r * q);
        std::vector<Complex> z;
        if (r == 2) {
            const Complex w = tw(l * step);
            if (sign < 0) {
                z = {x[0] + x[1], (x[0] - x[1]) * w};
            } else {
                const Complex b = x[1] * w;
                z = {x[0] + b, x[0] - b};
            }
        } else if (sign < 0) {
            // Forward radix-4 DIF: z0 = a + c, z1 = (a - c) w^2l, z2 = (b + d) w^l,
            // z3 = (b - d) w^3l with a = x0 + x2, b = x0 - x2, c = x1 + x3, d = (x1 - x3)(-i).
            const Complex a = x[0] + x[2], b = x[0] - x[2], c = x[1] + x[3], d = times_i(x[1] - x[3], sign);
            z = {a + c, (a - c) * tw(2 * l * step), (b + d) * tw(l * step), (b - d) * tw(3 * l * step)};
        } else {
            // Its mirror (inverse twiddles): A = z0 + z1 w^2l, C = z0 - z1 w^2l,
            // B = z2 w^l + z3 w^3l, D = (z2 w^l - z3 w^3l)(+i); x0 = A + B, x2 = A - B,
            // x1 = C + D, x3 = C - D.
            const Complex z1 = x[1] * tw(2 * l * step), z2 = x[2] * tw(l * step), z3 = x[3] * tw(3 * l * step);
            const Complex A = x[0] + z1, C = x[0] - z1, B = z2 + z3, D = times_i(z2 - z3, sign);
            z = {A + B, C + D, A - B, C - D};
        }
        std::vector<Halide::Expr> re, im;
        for (const Complex &c : z) {
            re.push_back(c.re);
            im.push_back(c.im);
        }
        std::vector<Halide::Var> args{st.i, st.k};
        args.insert(args.end(), rest_vars.begin(), rest_vars.end());
        st.func(args) = {detail::select_of(t, re), detail::select_of(t, im)};
        in = st.func;
        out.stages.push_back(st);
    }
    return out;
}

}  // namespace halconv::gen::fft
