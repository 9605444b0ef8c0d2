// Float64 gold reference for multi-channel correlation (halconv::multichannel_correlate2d):
// the definition written as plainly as possible, every channel sampled through the
// single-channel reference's boundary rule (reference.h).
//   image   data[(y * width + x) * channels + c]
//   kernels data[((n * kh + j) * kw + i) * channels + c]
//   output  data[(y * out_width + x) * filters + n]
#pragma once

#include <cstdlib>
#include <vector>

#include "reference.h"

namespace halconv::test {

struct Tensor {
    int channels = 0, width = 0, height = 0;
    std::vector<double> data;
    double at(int c, int x, int y) const { return data[(static_cast<size_t>(y) * width + x) * channels + c]; }
};

struct KernelBank {
    int channels = 0, width = 0, height = 0, count = 0;
    std::vector<double> data;
    double at(int c, int i, int j, int n) const {
        return data[((static_cast<size_t>(n) * height + j) * width + i) * channels + c];
    }
};

struct MultichannelReference {
    Tensor value;      // exact result, channels = filters
    Tensor magnitude;  // sum |k| |x| per output
};

// Image sample (c, x, y) with out-of-image positions per the boundary rule.
inline double sample(const Tensor &img, int c, int x, int y, Boundary b, double fill) {
    const bool inside = x >= 0 && x < img.width && y >= 0 && y < img.height;
    if (!inside && b == Boundary::constant) {
        return fill;
    }
    return img.at(c, boundary_index(x, img.width, b), boundary_index(y, img.height, b));
}

inline MultichannelReference multichannel_reference(const Tensor &img, const KernelBank &k, Mode mode, Boundary b,
                                                    double fill, bool flip) {
    const int kw = k.width, kh = k.height;
    const auto [ow, oh, ox, oy] = reference_placement(img.width, img.height, kw, kh, mode, flip);
    const size_t size = static_cast<size_t>(ow) * oh * k.count;
    MultichannelReference r{{k.count, ow, oh, std::vector<double>(size)}, {k.count, ow, oh, std::vector<double>(size)}};
    for (int y = 0; y < oh; y++) {
        for (int x = 0; x < ow; x++) {
            for (int n = 0; n < k.count; n++) {
                double s = 0.0, m = 0.0;
                for (int j = 0; j < kh; j++) {
                    for (int i = 0; i < kw; i++) {
                        for (int c = 0; c < k.channels; c++) {
                            const double w = flip ? k.at(c, kw - 1 - i, kh - 1 - j, n) : k.at(c, i, j, n);
                            const double v = sample(img, c, x + i - ox, y + j - oy, b, fill);
                            s += w * v;
                            m += std::abs(w) * std::abs(v);
                        }
                    }
                }
                const size_t at = (static_cast<size_t>(y) * ow + x) * k.count + n;
                r.value.data[at] = s;
                r.magnitude.data[at] = m;
            }
        }
    }
    return r;
}

}  // namespace halconv::test
