// float32 operands on float16 tensor cores with float32 accuracy: an error-compensated
// split after Ootomo & Yokota 2022 ("Recovering single precision accuracy from Tensor Cores
// while surpassing the FP32 theoretical peak performance"), with a power-of-two scale per
// tensor for range. Host and device code (the CPU model in tests/test_split_f32.cpp and the
// kernels' staging), so both use the same arithmetic.
//
// A tensor whose largest magnitude is m is scaled by 2^scale_exponent(m), which puts m in
// [2^14, 2^15): every scaled value and its parts stay below f16's largest finite value.
// Each scaled value v is carried as three f16 parts, each part's residual scaled up by
// 2^b so that it stays a normal f16 number:
//     v = hi + mid·2^-b + lo·2^-2b + e
// A product of two split tensors sums the tensor cores' exact f16 x f16 products, those of
// one weight 2^-bk in an accumulator of their own so that rounding in the larger does not
// eat the smaller. The H100's mma rounds each block of products toward zero (measured:
// bench/results/h100/split_f32/), so the hi·hi blocks are each summed into a zero
// accumulator and added to the float32 result outside the tensor core with round to
// nearest; the smaller weights may chain in the mma's C, their truncation is 2^-b smaller.
//
// Two schemes; tests/test_split_f32.cpp measures both on the photo against the float32
// direct path and a correctly rounded result:
//   floating_three: parts rounded to f16 value by value (b = 11, relative precision for
//     every value, |e| <= 2^-23·|v| with two parts); three products (hi·hi, hi·mid,
//     mid·hi). The truncation of each hi·hi block and the dropped terms cost about 3x a
//     correctly rounded sum: within the float32 direct path's error once its own sum is
//     long (from 7 x 7 taps), 2-3x worse below.
//   fixed_six: parts on a per-tensor fixed-point grid, each a multiple of 2^5 with
//     magnitude <= 2^15 (b = 10, 30 bits below the tensor's largest value); six products
//     (adding mid·mid, hi·lo, lo·hi). A block of 16 products of one weight is a multiple of
//     2^10 below 2^34, exact in float32: nothing truncates, and a short sum comes out
//     correctly rounded. Used below 7 x 7 taps, where a float32 direct sum is nearly so.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "common/host_device.h"

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#endif

namespace halconv::rk::split_f32 {

enum class Scheme : int { floating_three, fixed_six };

// The taps from which floating_three is accurate enough (see above).
inline constexpr int floating_three_min_taps = 49;

HALCONV_HOST_DEVICE constexpr Scheme scheme_for(int kw, int kh) {
    return kw * kh < floating_three_min_taps ? Scheme::fixed_six : Scheme::floating_three;
}

// Products per output: 3 or 6.
HALCONV_HOST_DEVICE constexpr int terms(Scheme s) {
    return s == Scheme::fixed_six ? 6 : 3;
}

// 2^-b, the weight of each part relative to the one above (b: 10 or 11 bits).
HALCONV_HOST_DEVICE constexpr float part_weight(Scheme s) {
    return s == Scheme::fixed_six ? 0x1p-10f : 0x1p-11f;
}

// fixed_six's grid: every part a multiple of 2^5 (a 10-bit integer times 32 below 2^15).
inline constexpr float fixed_quantum = 32.0f;

// The exponent e of the power-of-two scale 2^e that puts max_abs·2^e in [2^14, 2^15);
// 0 for a tensor of zeros (or of non-finite values, which the kernels do not split:
// they fall back to the exact path, as they do for non-finite f16 samples).
HALCONV_HOST_DEVICE inline int scale_exponent(float max_abs) {
    if (!(max_abs > 0.0f) || !std::isfinite(max_abs)) {
        return 0;
    }
    int e = 0;
    (void)std::frexp(max_abs, &e);  // max_abs = f·2^e, f in [0.5, 1): max_abs·2^(15-e) in [2^14, 2^15)
    return 15 - e;
}

// scale_exponent of a magnitude given by its bits (a tensor's largest, taken as unsigned
// integers as a warp's max-reduction gives it): for a normal float, 15 - e with e = its biased
// exponent - 126, read without frexp (a kernel's hot loop: the separable tensor-core passes
// split every line at its own scale); scale_exponent's own answer for the rest.
HALCONV_HOST_DEVICE inline int scale_exponent_of_bits(uint32_t bits) {
    const int biased = int(bits >> 23);
    if (biased >= 1 && biased <= 254) {
        return 141 - biased;
    }
#if defined(__CUDA_ARCH__)
    return scale_exponent(__uint_as_float(bits));
#else
    return scale_exponent(std::bit_cast<float>(bits));
#endif
}

// Rounds a float to the nearest float16 value (ties to even), returned as a float:
// subnormal f16 results keep their reduced precision, beyond 65504 the result is
// infinite. On the device the conversion instruction; on the host the same rounding in
// float arithmetic (tests/test_split_f32.cpp checks it against halconv's conversion).
HALCONV_HOST_DEVICE inline float round_to_f16(float v) {
#if defined(__CUDA_ARCH__)
    return __half2float(__float2half_rn(v));
#else
    const float a = std::fabs(v);
    if (!(a < 65520.0f)) {  // 65520 = halfway between 65504 and 2^16: rounds to infinity
        return a == a ? std::copysign(INFINITY, v) : v;
    }
    // ulp of the f16 result: 2^(exponent - 10) for normals, 2^-24 below 2^-14.
    int e = 0;
    (void)std::frexp(a, &e);  // a in [2^(e-1), 2^e)
    const int ulp_exp = (e - 1 < -14 ? -14 : e - 1) - 10;
    const float ulp = std::ldexp(1.0f, ulp_exp);
    // a / ulp < 2^11 is exact in float; rint rounds half to even in the default mode.
    return std::copysign(std::rint(a / ulp) * ulp, v);
#endif
}

// The nearest multiple of fixed_quantum (ties to even), exactly an f16 value for |v| < 2^15.
HALCONV_HOST_DEVICE inline float round_to_fixed(float v) {
    return std::rint(v * (1.0f / fixed_quantum)) * fixed_quantum;
}

// The parts of a scaled value (each exactly a float16 value, held as float).
struct Parts {
    float hi, mid, lo;
};

// Every subtraction below is exact (Sterbenz): a nonzero part lies within a factor of two
// of the value it is taken from; the scalings are powers of two.
HALCONV_HOST_DEVICE inline Parts split(float scaled, Scheme s) {
    const float up = 1.0f / part_weight(s);
    const auto part = [s](float v) { return s == Scheme::fixed_six ? round_to_fixed(v) : round_to_f16(v); };
    Parts p{};
    p.hi = part(scaled);
    const float r1 = (scaled - p.hi) * up;
    p.mid = part(r1);
    p.lo = part((r1 - p.mid) * up);
    return p;
}

// floating_three's two parts at their own weight, v ~ hi + mid with mid = f16(v - hi) (the
// subtraction is exact; mid is subnormal below 2^-14, an absolute error of at most 2^-25,
// 2^-40 of the tensor's largest scaled value). The Hopper kernel (im2tensor_fused_sm90.cu)
// uses them: with every part at its weight, one wgmma accumulator can take a block's
// hi·mid and mid·hi products and then its hi·hi products, smallest first, so that only the
// hi·hi alignment truncates, and the block is added to the float32 result outside the
// tensor core as before: two accumulators instead of three.
struct InPlaceParts {
    float hi, mid;
};

HALCONV_HOST_DEVICE inline InPlaceParts split_in_place(float scaled) {
    const float hi = round_to_f16(scaled);
    return {hi, round_to_f16(scaled - hi)};
}

#if defined(__CUDACC__)
// split_in_place for two scaled values at once, as two half2 registers (hi, mid), with
// paired conversions: what the wgmma kernels stage (the separable passes, their probes).
__device__ inline void split_pair(float a, float b, uint32_t &hi, uint32_t &mid) {
    const __half2 h = __floats2half2_rn(a, b);
    const float2 back = __half22float2(h);
    const __half2 m = __floats2half2_rn(a - back.x, b - back.y);
    hi = *reinterpret_cast<const uint32_t *>(&h);
    mid = *reinterpret_cast<const uint32_t *>(&m);
}

// 2^e as a float, a scale_exponent's factor: from its bits where 2^e is a normal float,
// else ldexpf.
__device__ inline float pow2(int e) {
    return e >= -126 && e <= 127 ? __int_as_float((e + 127) << 23) : ldexpf(1.0f, e);
}
#endif

}  // namespace halconv::rk::split_f32
