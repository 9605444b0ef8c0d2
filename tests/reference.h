// Float64 gold reference for halconv: the definition of scipy.signal.correlate2d with
// scipy.ndimage boundary names, written as plainly as possible. Images are indexed
// [y * width + x].
#pragma once

#include <vector>

#include "halconv/types.h"

namespace halconv::test {

struct Image {
    int width = 0;
    int height = 0;
    std::vector<double> data;  // row-major, data[y * width + x]
    double at(int x, int y) const { return data[static_cast<size_t>(y) * width + x]; }
};

// Index of the image sample that position i reads under a (non-constant) boundary.
inline int boundary_index(int i, int n, Boundary b) {
    if (i >= 0 && i < n) {
        return i;
    }
    switch (b) {
        case Boundary::nearest:
            return i < 0 ? 0 : n - 1;
        case Boundary::wrap:
            return ((i % n) + n) % n;
        case Boundary::reflect: {  // period 2n: abcd dcba
            const int m = ((i % (2 * n)) + 2 * n) % (2 * n);
            return m < n ? m : 2 * n - 1 - m;
        }
        case Boundary::mirror: {  // period 2n-2: abcd cb
            if (n == 1) {
                return 0;
            }
            const int p = 2 * n - 2;
            const int m = ((i % p) + p) % p;
            return m < n ? m : p - m;
        }
        case Boundary::constant:
            break;
    }
    return -1;
}

inline double sample(const Image &img, int x, int y, Boundary b, double fill) {
    const bool inside = x >= 0 && x < img.width && y >= 0 && y < img.height;
    if (!inside && b == Boundary::constant) {
        return fill;
    }
    return img.at(boundary_index(x, img.width, b), boundary_index(y, img.height, b));
}

struct Reference {
    Image value;      // the exact (float64) result
    Image magnitude;  // sum |k| * |x| per output: scales the rounding-error bound
};

// Output extent of a mode and the image position (ox, oy) read by kernel tap (0, 0) of
// output (0, 0), SciPy's placement.
struct Placement {
    int width, height, ox, oy;
};

inline Placement reference_placement(int width, int height, int kw, int kh, Mode mode, bool flip) {
    if (mode == Mode::valid) {
        return {width - kw + 1, height - kh + 1, 0, 0};
    }
    if (mode == Mode::full) {
        return {width + kw - 1, height + kh - 1, kw - 1, kh - 1};
    }
    // scipy: 'same' is the centre of 'full'; convolve2d centres even kernels one sample
    // differently from correlate2d.
    return {width, height, flip ? kw / 2 : (kw - 1) / 2, flip ? kh / 2 : (kh - 1) / 2};
}

// correlate2d (flip = false) or convolve2d (flip = true), SciPy's placement per mode.
inline Reference correlate_reference(const Image &img, const Image &kernel, Mode mode, Boundary b, double fill,
                                     bool flip) {
    const int kw = kernel.width, kh = kernel.height;
    const auto [ow, oh, ox, oy] = reference_placement(img.width, img.height, kw, kh, mode, flip);
    Reference r{{ow, oh, std::vector<double>(static_cast<size_t>(ow) * oh)},
                {ow, oh, std::vector<double>(static_cast<size_t>(ow) * oh)}};
    for (int y = 0; y < oh; y++) {
        for (int x = 0; x < ow; x++) {
            double s = 0.0, m = 0.0;
            for (int j = 0; j < kh; j++) {
                for (int i = 0; i < kw; i++) {
                    const double k = flip ? kernel.at(kw - 1 - i, kh - 1 - j) : kernel.at(i, j);
                    const double v = sample(img, x + i - ox, y + j - oy, b, fill);
                    s += k * v;
                    m += (k < 0 ? -k : k) * (v < 0 ? -v : v);
                }
            }
            r.value.data[static_cast<size_t>(y) * ow + x] = s;
            r.magnitude.data[static_cast<size_t>(y) * ow + x] = m;
        }
    }
    return r;
}

}  // namespace halconv::test
