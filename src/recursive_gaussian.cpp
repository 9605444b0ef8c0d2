// The recursive Gaussian's coefficients (runtime_kernels/recursive/recursive_layout.h
// defines the filter and their layout) and its error bound.
#include <algorithm>
#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "internal.h"
#include "recursive/recursive_layout.h"

namespace halconv {

namespace {

using Cx = std::complex<double>;
namespace rg = rk::rg;

// exp(-t^2 / 2) ~ sum_k 2 Re(alpha_k exp(-lambda_k t)) for t >= 0: Deriche's form with three
// pole pairs instead of his two (largest error 1.9e-6 against his fit's 1.7e-4 and more),
// from a reweighted least-squares fit on [0, 14] (scripts/fit_recursive_gaussian.py).
struct Term {
    Cx alpha, lambda;
};
constexpr Term fit[rg::poles] = {
    {{1.5403524293596857, 3.3859527815505404}, {2.1528825570313583, 0.5240061356178112}},
    {{-1.1122237301991558, -0.36193067416926}, {2.118566886583331, 1.6091652066936963}},
    {{0.07187034100806193, -0.0299327303002679}, {2.040213450558875, 2.8479554212071934}},
};

struct Filter {
    Cx pole[rg::poles];
    Cx weight[rg::poles];
};

// The poles for sigma (rounded to float when the sums are float, so that the weights
// normalize the filter the pipeline runs) and the weights that make its sum 1.
Filter filter_for(double sigma, bool single) {
    Filter f;
    double gain = 0.0;
    for (int k = 0; k < rg::poles; k++) {
        Cx p = std::exp(-fit[k].lambda / sigma);
        if (single) {
            p = {double(float(p.real())), double(float(p.imag()))};
        }
        f.pole[k] = p;
        gain += 2.0 * (fit[k].alpha * (1.0 + p) / (1.0 - p)).real();
    }
    for (int k = 0; k < rg::poles; k++) {
        f.weight[k] = fit[k].alpha / gain;
    }
    return f;
}

void check_sigma(double sigma) {
    if (!(sigma >= min_recursive_sigma && sigma <= max_recursive_sigma)) {
        throw Error(ErrorCode::invalid_argument, "recursive Gaussian sigma " + std::to_string(sigma) +
                                                     ": allowed from " + std::to_string(min_recursive_sigma) + " to " +
                                                     std::to_string(max_recursive_sigma));
    }
}

}  // namespace

double recursive_gaussian_error(double sigma) {
    check_sigma(sigma);
    const Filter f = filter_for(sigma, false);
    // Both filters are below 1e-30 of their peak past 14 sigma + 40 samples.
    const int reach = int(std::ceil(14.0 * sigma)) + 40;
    std::vector<double> g(size_t(reach) + 1);
    double g_sum = 0.0;
    for (int n = 0; n <= reach; n++) {
        g[size_t(n)] = std::exp(-double(n) * double(n) / (2.0 * sigma * sigma));
        g_sum += n == 0 ? g[0] : 2.0 * g[size_t(n)];
    }
    double diff = 0.0, h_l1 = 0.0;
    for (int n = 0; n <= reach; n++) {
        double h = 0.0;
        for (int k = 0; k < rg::poles; k++) {
            h += 2.0 * (f.weight[k] * std::pow(f.pole[k], n)).real();
        }
        const double count = n == 0 ? 1.0 : 2.0;
        diff += count * std::abs(h - g[size_t(n)] / g_sum);
        h_l1 += count * std::abs(h);
    }
    // h (x) h - g (x) g = (h - g) (x) h + g (x) (h - g), and |g|_1 = 1.
    return diff * (h_l1 + 1.0);
}

namespace internal {

RecursiveCoefficients recursive_gaussian_coefficients(double sigma, Extent2d image, Boundary boundary, bool single) {
    check_sigma(sigma);
    const Filter f = filter_for(sigma, single);
    const int lengths[2] = {image.width, image.height};
    // Powers past 2^-60 are 0 to the sums: the table stops at the first such entry
    // (readers clamp to its last), so that it grows with sigma, not with the image.
    double slowest = 0.0;
    for (int k = 0; k < rg::poles; k++) {
        slowest = std::max(slowest, std::abs(f.pole[k]));
    }
    const double vanish = std::ceil(60.0 * std::log(2.0) / -std::log(slowest));
    const int longest = std::max(image.width, image.height);
    const int entries = vanish < double(longest) ? int(vanish) + 1 : longest + 1;
    RecursiveCoefficients c{Halide::Runtime::Buffer<double>(rg::coefficients_per_axis, 2),
                            Halide::Runtime::Buffer<double>(rg::power_components, entries, 2)};
    c.coefficients.fill(0.0);
    c.powers.fill(0.0);
    for (int axis = 0; axis < 2; axis++) {
        const int n = lengths[axis];
        const Boundary rule = boundary == Boundary::mirror && n == 1 ? Boundary::nearest : boundary;
        for (int k = 0; k < rg::poles; k++) {
            const Cx p = f.pole[k];
            Cx gain = 1.0 / (1.0 - p), head = 0.0, tail = 0.0;
            if (rule == Boundary::wrap) {
                gain = 1.0 / (1.0 - std::pow(p, n));
                tail = 1.0;
            } else if (rule == Boundary::reflect || rule == Boundary::mirror) {
                const int period = rule == Boundary::reflect ? 2 * n : 2 * n - 2;
                gain = 1.0 / (1.0 - std::pow(p, period));
                head = 1.0;
                tail = std::pow(p, period / 2);
            }
            const auto put = [&](rg::Value v, Cx value) {
                c.coefficients(rg::coefficient_index(k, v, 0), axis) = value.real();
                c.coefficients(rg::coefficient_index(k, v, 1), axis) = value.imag();
            };
            put(rg::pole, p);
            put(rg::weight, f.weight[k]);
            put(rg::gain, gain);
            put(rg::head_weight, head);
            put(rg::tail_weight, tail);
            for (int i = 0; i <= n && i < entries && std::pow(std::abs(p), i) > 0x1p-60; i++) {
                const Cx pi = std::pow(p, i);
                c.powers(2 * k, i, axis) = pi.real();
                c.powers(2 * k + 1, i, axis) = pi.imag();
            }
        }
    }
    return c;
}

}  // namespace internal
}  // namespace halconv
