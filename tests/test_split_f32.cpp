// The error-compensated split of float32 operands for float16 tensor cores
// (runtime_kernels/common/split_f32.h), modelled on the CPU: both schemes' parts and their
// recombination, the rounding to float16 against halconv's own conversion, fixed_six's
// exact blocks, and a model of a tensor-core correlation (exact f16 x f16 products,
// float32 accumulators) whose accuracy on the photo is compared with halconv's float32
// direct path under three ways of accumulating the hi·hi products: round to nearest,
// truncation (round toward zero) each time a 16-product block is added, as
// bench/probes/tensor_core_rounding.cu measured on the H100 (bench/results/h100/split_f32/),
// and that truncation confined to each block with the blocks added outside the tensor core.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "common/split_f32.h"
#include "halconv/float16.h"
#include "halconv/halconv.h"
#include "image_io.h"
#include "reference.h"
#include "tensor_core_model.h"
#include "test_support.h"

namespace halconv::test {
namespace {

namespace split = rk::split_f32;

float f16_by_library(float v) {
    return float(double_from_float16_bits(float16_bits_from_double(double(v))));
}

// Random float32 values with exponents spread over [lo, hi] and random significands.
float wide_random(int lo_exp, int hi_exp) {
    std::uniform_int_distribution<int> exp(lo_exp, hi_exp);
    std::uniform_real_distribution<float> sig(1.0f, 2.0f);
    std::bernoulli_distribution neg(0.5);
    const float v = std::ldexp(sig(rng()), exp(rng()));
    return neg(rng()) ? -v : v;
}

TEST(SplitF32, RoundsToFloat16AsTheLibraryConverts) {
    std::vector<float> values = {0.0f,     -0.0f,           65504.0f,        65519.99f, 65520.0f, 1e9f,
                                 0x1p-24f, 0x1.8p-25f,      0x1p-25f,        0x1p-26f,  0x1p-14f, 0x1.ffcp-15f,
                                 1.0f,     1.0f + 0x1p-11f, 1.0f + 0x3p-11f, 2049.0f,   2051.0f};
    for (int i = 0; i < 200000; i++) {
        values.push_back(wide_random(-30, 17));
    }
    for (float v : values) {
        const float mine = split::round_to_f16(v), theirs = f16_by_library(v);
        ASSERT_TRUE(mine == theirs && std::signbit(mine) == std::signbit(theirs))
            << std::hexfloat << v << ": " << mine << " vs " << theirs;
    }
}

const char *name_of(split::Scheme s) {
    return s == split::Scheme::fixed_six ? "fixed_six" : "floating_three";
}

constexpr split::Scheme schemes[] = {split::Scheme::floating_three, split::Scheme::fixed_six};

// Every scaled value of a tensor splits into float16 parts that recombine to it:
//   floating_three: two parts within 2^-23 of the value, three exactly down to 2^-15 of the
//     tensor's largest magnitude;
//   fixed_six: parts are multiples of 2^5 of at most 2^15, two within 2^-6 (half the
//     second part's quantum), three within 2^-16;
//   in place (the Hopper kernel's): floating_three's hi, and a mid at its own weight
//     within 2^-23 of the value or 2^-25 (the float16 subnormal spacing's half).
TEST(SplitF32, PartsAreFloat16AndRecombine) {
    for (split::Scheme s : schemes) {
        const double w = split::part_weight(s);
        for (int tensor = 0; tensor < 100; tensor++) {
            std::uniform_int_distribution<int> top(-60, 60);
            const int t = top(rng());
            const int exponent = split::scale_exponent(std::ldexp(1.999f, t));
            ASSERT_EQ(exponent, 14 - t);  // 1.999 * 2^t lands in [2^14, 2^15)
            for (int i = 0; i < 2000; i++) {
                const float x = i == 0 ? std::ldexp(1.999f, t) : wide_random(t - 40, t);
                const float v = std::ldexp(x, exponent);
                ASSERT_LT(std::fabs(v), 32768.0f);
                const split::InPlaceParts q = split::split_in_place(v);
                ASSERT_EQ(q.hi, split::split(v, split::Scheme::floating_three).hi);
                ASSERT_EQ(split::round_to_f16(q.mid), q.mid) << "not a float16 value";
                ASSERT_LE(std::fabs(double(q.hi) + q.mid - v), 0x1p-23 * std::fabs(v) + 0x1p-25) << std::hexfloat << v;
                const split::Parts p = split::split(v, s);
                for (float part : {p.hi, p.mid, p.lo}) {
                    ASSERT_EQ(split::round_to_f16(part), part) << "not a float16 value";
                    if (s == split::Scheme::fixed_six) {
                        ASSERT_LE(std::fabs(part), 32768.0f);
                        ASSERT_EQ(std::fmod(part, split::fixed_quantum), 0.0f) << part;
                    }
                }
                const double two = double(p.hi) + double(p.mid) * w;
                const double three = two + double(p.lo) * w * w;
                if (s == split::Scheme::fixed_six) {
                    ASSERT_LE(std::fabs(two - v), 0x1p-6) << std::hexfloat << v;
                    ASSERT_LE(std::fabs(three - v), 0x1p-16) << std::hexfloat << v;
                    continue;
                }
                // Absolute floor: the parts' subnormal spacing 2^-24, at weight 2^-11 and 2^-22.
                ASSERT_LE(std::fabs(two - v), 0x1p-23 * std::fabs(v) + 0x1p-36) << std::hexfloat << v;
                // From |v| >= 1 (values down to 2^-15 of the tensor's largest) every part is a
                // normal float16 and the three hold all of v's bits.
                if (std::fabs(v) >= 1.0f) {
                    ASSERT_EQ(three, double(v)) << std::hexfloat << v;
                } else {
                    ASSERT_LE(std::fabs(three - v), 0x1p-36) << std::hexfloat << v;
                }
            }
        }
    }
    EXPECT_EQ(split::scale_exponent(0.0f), 0);
    EXPECT_EQ(split::scale_exponent(INFINITY), 0);
}

// The split's scale from a magnitude's bits (the separable tensor-core passes take it from a
// warp's max-reduction) is scale_exponent's: normal, subnormal, zero and non-finite
// magnitudes, and every biased exponent.
TEST(SplitF32, ScaleExponentFromBitsIsScaleExponents) {
    std::vector<float> magnitudes = {0.0f, 0x1p-149f, 0x1.8p-140f,     0x1p-126f, 0x1.fffffep-127f,
                                     1.0f, 65504.0f,  0x1.fffffep127f, INFINITY,  NAN};
    for (int e = -126; e <= 127; e++) {
        magnitudes.push_back(std::ldexp(1.0f, e));
        magnitudes.push_back(std::ldexp(1.7f, e));
    }
    for (float m : magnitudes) {
        EXPECT_EQ(split::scale_exponent_of_bits(std::bit_cast<uint32_t>(m)), split::scale_exponent(m)) << m;
    }
}

// fixed_six's premise: any 16 products of one weight, parts of two split tensors, sum to
// a float32 value exactly (so the tensor core has nothing to truncate), down to the
// extreme block of 16 largest parts (2^34).
TEST(SplitF32, FixedSixBlocksSumExactly) {
    std::uniform_real_distribution<float> any(-1.0f, 1.0f);
    for (int block = 0; block < 20000; block++) {
        const float top = block % 7 == 0 ? 1.0f : any(rng());  // some blocks at the tensor's maximum
        double sums[3] = {0.0, 0.0, 0.0};
        for (int i = 0; i < 16; i++) {
            const float a = std::ldexp(block % 7 == 0 ? top : any(rng()), 15) * 0.99999f;
            const float b = std::ldexp(block % 7 == 0 ? top : any(rng()), 15) * 0.99999f;
            const split::Parts p = split::split(a, split::Scheme::fixed_six);
            const split::Parts q = split::split(b, split::Scheme::fixed_six);
            sums[0] += double(p.hi) * q.hi;
            sums[1] += double(p.mid) * q.hi;
            sums[2] += double(p.lo) * q.mid;
        }
        for (double sum : sums) {
            ASSERT_EQ(double(float(sum)), sum) << std::hexfloat << sum;
        }
    }
}

// How the model's float32 accumulator of the hi·hi products takes a block of 16 products
// (one mma's k):
//   nearest: the exact block added with round to nearest (no tensor core does this; the
//     ideal);
//   truncated: the block summed into the accumulator as the mma's C, as the tensor core
//     sums (tests/tensor_core_model.h, fitted on the H100);
//   truncated_block_outside: the block summed by an mma into a zero C, then added to the
//     accumulator outside the tensor core with round to nearest (Ootomo & Yokota's remedy:
//     one FADD per accumulator element and block).
// The smaller weights' accumulators chain in C in every case, one mma per pair of parts
// (as the kernels do).
enum class Accumulation { nearest, truncated, truncated_block_outside };

const char *name_of(Accumulation a) {
    return a == Accumulation::nearest ? "nearest" : a == Accumulation::truncated ? "truncated" : "outside";
}

struct Split2d {
    std::vector<split::Parts> parts;
    float unscale;  // 2^-exponent
};

// The exponent of the power-of-two scale the kernels give a tensor (from its largest magnitude).
int tensor_scale_exponent(const std::vector<float> &v) {
    float m = 0.0f;
    for (float x : v) {
        m = std::max(m, std::fabs(x));
    }
    return split::scale_exponent(m);
}

Split2d split_tensor(const std::vector<float> &v, split::Scheme s) {
    const int e = tensor_scale_exponent(v);
    Split2d t{std::vector<split::Parts>(v.size()), std::ldexp(1.0f, -e)};
    for (size_t i = 0; i < v.size(); i++) {
        t.parts[i] = split::split(std::ldexp(v[i], e), s);
    }
    return t;
}

// One k block's operands: part p of image and kernel samples, tap by tap.
struct Block {
    float image[3][16], kernel[3][16];
    int taps = 0;
};

// Adds a block to the accumulators, weight by weight (hi·hi; hi·mid, mid·hi; mid·mid,
// hi·lo, lo·hi).
void accumulate(float acc[3], const Block &b, split::Scheme s, Accumulation a) {
    namespace tc = tensor_core;
    const auto &im = b.image;
    const auto &k = b.kernel;
    switch (a) {
        case Accumulation::nearest: {
            double exact = acc[0];
            for (int i = 0; i < b.taps; i++) {
                exact += double(im[0][i]) * k[0][i];
            }
            acc[0] = float(exact);
            break;
        }
        case Accumulation::truncated:
            acc[0] = tc::sum(acc[0], im[0], k[0], b.taps);
            break;
        default:
            acc[0] += tc::sum(0.0f, im[0], k[0], b.taps);
    }
    acc[1] = tc::sum(tc::sum(acc[1], im[0], k[1], b.taps), im[1], k[0], b.taps);
    if (split::terms(s) == 6) {
        acc[2] = tc::sum(tc::sum(tc::sum(acc[2], im[1], k[1], b.taps), im[0], k[2], b.taps), im[2], k[0], b.taps);
    }
}

// The valid correlation as the tensor-core kernels compute it from the parts: blocks of
// 16 taps (one mma's k) accumulated per weight (2^0, 2^-b, 2^-2b), the accumulators
// combined in float32 at the end, smallest first.
std::vector<float> model_correlation(const std::vector<float> &img, int w, int h, const std::vector<float> &ker, int kw,
                                     int kh, split::Scheme s, Accumulation a) {
    const Split2d si = split_tensor(img, s), sk = split_tensor(ker, s);
    const float weight = split::part_weight(s);
    const int ow = w - kw + 1, oh = h - kh + 1;
    std::vector<float> out(size_t(ow) * oh);
    for (int y = 0; y < oh; y++) {
        for (int x = 0; x < ow; x++) {
            float acc[3] = {0.0f, 0.0f, 0.0f};
            Block block;
            for (int j = 0; j < kh; j++) {
                for (int i = 0; i < kw; i++) {
                    const split::Parts &p = si.parts[size_t(y + j) * w + x + i];
                    const split::Parts &q = sk.parts[size_t(j) * kw + i];
                    const int t = block.taps++;
                    block.image[0][t] = p.hi, block.image[1][t] = p.mid, block.image[2][t] = p.lo;
                    block.kernel[0][t] = q.hi, block.kernel[1][t] = q.mid, block.kernel[2][t] = q.lo;
                    if (block.taps == 16 || (j == kh - 1 && i == kw - 1)) {
                        accumulate(acc, block, s, a);
                        block.taps = 0;
                    }
                }
            }
            const float sum = acc[0] + (acc[1] + acc[2] * weight) * weight;
            out[size_t(y) * ow + x] = sum * si.unscale * sk.unscale;
        }
    }
    return out;
}

// The Hopper kernel's sums (im2tensor_fused_sm90.cu), modelled: an output of row y sums S = 16
// elements, element i over kernel columns x = 16 a + i. Per kernel column, its blocks of 16
// kernel rows (shifted by y mod 4, the output rows stacked in M) chain in one accumulator
// from zero, each block's hi·mid and mid·hi products (in-place parts, split_in_place) before
// its hi·hi products; the chain is added to the element outside the tensor core with round
// to nearest, and the elements are summed in float32 by the epilogue.
std::vector<float> model_correlation_hopper(const std::vector<float> &img, int w, int h, const std::vector<float> &ker,
                                            int kw, int kh) {
    namespace tc = tensor_core;
    const auto in_place = [](const std::vector<float> &v, std::vector<split::InPlaceParts> &parts) {
        const int e = tensor_scale_exponent(v);
        parts.resize(v.size());
        for (size_t i = 0; i < v.size(); i++) {
            parts[i] = split::split_in_place(std::ldexp(v[i], e));
        }
        return std::ldexp(1.0f, -e);
    };
    std::vector<split::InPlaceParts> pi, pk;
    const float unscale = in_place(img, pi) * in_place(ker, pk);
    constexpr int S = 16, rows_per_m = 4;
    const int ow = w - kw + 1, oh = h - kh + 1;
    std::vector<float> out(size_t(ow) * oh);
    for (int y = 0; y < oh; y++) {
        const int r = y % rows_per_m;
        for (int x = 0; x < ow; x++) {
            float total = 0.0f;
            for (int i = 0; i < S; i++) {
                float element = 0.0f;
                for (int kx = i; kx < kw; kx += S) {
                    float chain = 0.0f;
                    for (int k0 = -r; k0 < kh; k0 += 16) {
                        float hi_i[16] = {}, mid_i[16] = {}, hi_k[16] = {}, mid_k[16] = {};
                        for (int t = 0; t < 16; t++) {
                            const int ky = k0 + t;
                            if (ky >= 0 && ky < kh) {
                                const split::InPlaceParts &a = pi[size_t(y + ky) * w + x + kx];
                                const split::InPlaceParts &b = pk[size_t(ky) * kw + kx];
                                hi_i[t] = a.hi, mid_i[t] = a.mid, hi_k[t] = b.hi, mid_k[t] = b.mid;
                            }
                        }
                        chain = tc::sum(chain, hi_i, mid_k, 16);
                        chain = tc::sum(chain, mid_i, hi_k, 16);
                        chain = tc::sum(chain, hi_i, hi_k, 16);
                    }
                    element += chain;
                }
                total += element;
            }
            out[size_t(y) * ow + x] = total * unscale;
        }
    }
    return out;
}

// halconv's float32 direct path on the CPU (the reference the split is held to).
std::vector<float> direct_f32(const std::vector<float> &img, int w, int h, const std::vector<float> &ker, int kw,
                              int kh) {
    Halide::Runtime::Buffer<float> in(w, h), k(kw, kh), out(w - kw + 1, h - kh + 1);
    std::copy(img.begin(), img.end(), in.data());
    std::copy(ker.begin(), ker.end(), k.data());
    Options o;
    o.algorithm = Algorithm::shared_tiled;
    o.device = Device::cpu;
    o.mode = Mode::valid;
    correlate2d(in, k, out, o);
    return std::vector<float>(out.data(), out.data() + out.number_of_elements());
}

Image as_image(const std::vector<float> &v, int w, int h) {
    return Image{w, h, std::vector<double>(v.begin(), v.end())};
}

// Seed 000 eq. 20 against the float64 result of the same float32 data.
double mape(const std::vector<float> &p, const Image &ref) {
    std::vector<double> ape(p.size());
    for (size_t i = 0; i < p.size(); i++) {
        const double r = ref.data[i];
        ape[i] = r == 0.0 ? 0.0 : std::fabs(p[i] - r) / std::fabs(r);
    }
    std::nth_element(ape.begin(), ape.begin() + ape.size() / 2, ape.end());
    return 100.0 * ape[ape.size() / 2];
}

// The photo's top-left w x h (8-bit gray / 255, rounded to float32).
std::vector<float> photo_crop(int w, int h) {
    const io::Image png = io::read_png(repository_file("data/cameraman.png"));
    std::vector<float> v(size_t(w) * h);
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            v[size_t(y) * w + x] = float(png.channels.at(0)[size_t(y) * png.width + x]);
        }
    }
    return v;
}

std::vector<float> random_kernel_f32(int kw, int kh) {
    std::uniform_real_distribution<float> dist(0.0f, 1.0f);  // seed 000: coefficients in [0, 1)
    std::vector<float> k(size_t(kw) * kh);
    for (float &v : k) {
        v = dist(rng());
    }
    return k;
}

// The accuracy target, modelled: on the photo, the split's MAPE within 2x of the
// float32 direct path's at every K, for the scheme scheme_for() picks with hi·hi blocks
// added outside the tensor core. No float32 result beats the correctly rounded one, the
// floor printed beside. Truncating in the accumulator misses the target from K = 15 on;
// floating_three misses it below 7 x 7, where the direct sum is itself nearly correctly
// rounded and fixed_six, whose blocks are exact, is correctly rounded.
TEST(SplitF32, ModelMatchesTheFloat32DirectPathOnThePhoto) {
    const int w = 203, h = 170;  // odd and non-square
    const std::vector<float> img = photo_crop(w, h);
    for (const auto &[kw, kh] : {std::pair{1, 1}, {2, 3}, {3, 3}, {5, 5}, {6, 8}, {7, 7}, {9, 9}, {15, 15}, {31, 31}}) {
        const std::vector<float> ker = random_kernel_f32(kw, kh);
        const Reference ref = correlate_reference(as_image(img, w, h), as_image(ker, kw, kh), Mode::valid,
                                                  Boundary::constant, 0.0, false);
        const double direct = mape(direct_f32(img, w, h, ker, kw, kh), ref.value);
        const double rounded = mape(std::vector<float>(ref.value.data.begin(), ref.value.data.end()), ref.value);
        for (split::Scheme s : schemes) {
            for (Accumulation a :
                 {Accumulation::nearest, Accumulation::truncated, Accumulation::truncated_block_outside}) {
                const double m = mape(model_correlation(img, w, h, ker, kw, kh, s, a), ref.value);
                std::printf(
                    "%2dx%-2d %-14s %-9s: MAPE %.3e %% (f32 direct %.3e %%, ratio %.2f; correctly rounded "
                    "%.3e %%)\n",
                    kw, kh, name_of(s), name_of(a), m, direct, m / direct, rounded);
                if (a != Accumulation::truncated_block_outside) {
                    continue;
                }
                if (s == split::scheme_for(kw, kh)) {
                    EXPECT_LE(m, 2.0 * direct) << kw << "x" << kh << " " << name_of(s);
                }
                if (s == split::Scheme::fixed_six && kw * kh < split::floating_three_min_taps) {
                    EXPECT_LE(m, 1.1 * rounded) << kw << "x" << kh << ": exact blocks round once";
                }
            }
        }
        const double hopper = mape(model_correlation_hopper(img, w, h, ker, kw, kh), ref.value);
        std::printf("%2dx%-2d Hopper kernel's chains: MAPE %.3e %% (ratio %.2f)\n", kw, kh, hopper, hopper / direct);
        if (split::scheme_for(kw, kh) == split::Scheme::floating_three) {
            EXPECT_LE(hopper, 2.0 * direct) << kw << "x" << kh << " Hopper kernel";
        }
    }
}

// The stated bound, on images whose values span 1e-6 .. 1e6 with either sign and kernels
// of both signs, for n taps:
//     |p - r| <= (2^-19 + ceil(n / 16) * 2^-23) * max|I| * sum|K|
// With A = max|I| * sum|K|: the parts' representation and the dropped terms (2^-21 A);
// the tensor core's alignment of each hi·hi block to its largest product, 16 terms
// truncated by up to 2^-25 of it (2^-21 A over all blocks), and the block's truncation
// to float32 (2^-23 A); per block one round-to-nearest add (2^-24 A) and the smaller
// weights' chains (below 2^-26 A); the last combination (2^-23 A). fixed_six has no
// alignment or block error. The Hopper kernel's chain (in-place parts, each block's
// smaller products first) adds at most the truncation of those smaller products, below
// 2^-26 A over all blocks, and the in-place mid's subnormal rounding, 2^-40 A per tap.
// Chaining the hi·hi blocks in C is outside the bound: each block's products are then
// aligned to the accumulator, losing up to 2^-21 of it.
TEST(SplitF32, ErrorBoundOnWideRangeImages) {
    std::uniform_real_distribution<double> decade(-6.0, 6.0);
    std::uniform_real_distribution<float> coef(-1.0f, 1.0f);
    std::bernoulli_distribution neg(0.5);
    for (const auto &[kw, kh] : {std::pair{1, 1}, {3, 3}, {7, 5}, {16, 1}, {17, 17}, {31, 31}}) {
        const int w = 2 * kw + 19, h = kh + 23;
        std::vector<float> img(size_t(w) * h), ker(size_t(kw) * kh);
        for (float &v : img) {
            v = float(std::pow(10.0, decade(rng()))) * (neg(rng()) ? -1.0f : 1.0f);
        }
        for (float &v : ker) {
            v = coef(rng());
        }
        const Reference ref = correlate_reference(as_image(img, w, h), as_image(ker, kw, kh), Mode::valid,
                                                  Boundary::constant, 0.0, false);
        double max_i = 0.0, sum_k = 0.0;
        for (float v : img) {
            max_i = std::max(max_i, double(std::fabs(v)));
        }
        for (float v : ker) {
            sum_k += std::fabs(v);
        }
        const int n = kw * kh;
        const double bound = (0x1p-19 + double((n + 15) / 16) * 0x1p-23) * max_i * sum_k;
        for (split::Scheme s : schemes) {
            for (Accumulation a : {Accumulation::nearest, Accumulation::truncated_block_outside}) {
                const std::vector<float> p = model_correlation(img, w, h, ker, kw, kh, s, a);
                double worst = 0.0;
                for (size_t i = 0; i < p.size(); i++) {
                    worst = std::max(worst, std::fabs(p[i] - ref.value.data[i]));
                }
                EXPECT_LE(worst, bound) << kw << "x" << kh << " " << name_of(s) << " " << name_of(a);
            }
        }
        const std::vector<float> p = model_correlation_hopper(img, w, h, ker, kw, kh);
        double worst = 0.0;
        for (size_t i = 0; i < p.size(); i++) {
            worst = std::max(worst, std::fabs(p[i] - ref.value.data[i]));
        }
        EXPECT_LE(worst, bound) << kw << "x" << kh << " Hopper kernel";
    }
}

}  // namespace
}  // namespace halconv::test
