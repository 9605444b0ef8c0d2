// A model of how the H100's tensor cores sum f16 x f16 products into float32
// (mma.sync.m16n8k16 and wgmma.m64nNk16 alike), fitted and checked on the device by
// bench/probes/tensor_core_rounding.cu (bench/results/h100/split_f32/): every term is
// aligned to the largest exponent x among them, where a product a·b counts with the sum
// of its operands' exponents (its significand in [1, 4)) and C with its own; each term is
// truncated toward zero to a multiple of 2^(x - 25), the truncated terms are summed
// exactly and the sum is truncated to float32. Host code for the CPU model of the f32
// split (tests/test_split_f32.cpp) and the probe.
#pragma once

#include <algorithm>
#include <cmath>

namespace halconv::test::tensor_core {

// Fraction bits kept below the largest term's exponent.
inline constexpr int fraction_bits = 25;

inline float toward_zero(double exact) {
    float r = float(exact);
    return std::fabs(double(r)) > std::fabs(exact) ? std::nextafter(r, 0.0f) : r;
}

// c + sum of a[i]·b[i] for i < n (n <= 16, one k block), as the tensor core returns it.
inline float sum(float c, const float *a, const float *b, int n, int bits = fraction_bits) {
    int top = 0;
    bool any = false;
    const auto consider = [&](int x) {
        top = any ? std::max(top, x) : x;
        any = true;
    };
    if (c != 0.0f) {
        consider(std::ilogb(c));
    }
    for (int i = 0; i < n; i++) {
        if (a[i] != 0.0f && b[i] != 0.0f) {
            consider(std::ilogb(a[i]) + std::ilogb(b[i]));
        }
    }
    if (!any) {
        return 0.0f;
    }
    const double quantum = std::ldexp(1.0, top - bits);
    double s = std::trunc(double(c) / quantum) * quantum;
    for (int i = 0; i < n; i++) {
        s += std::trunc(double(a[i]) * b[i] / quantum) * quantum;
    }
    return toward_zero(s);
}

}  // namespace halconv::test::tensor_core
