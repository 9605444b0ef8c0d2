#include "halconv/float16.h"

#include <bit>
#include <cmath>

namespace halconv {

uint16_t float16_bits_from_double(double value) {
    // Round through float32 would double-round; work from the double's bits directly.
    const uint64_t bits = std::bit_cast<uint64_t>(value);
    const auto sign = static_cast<uint16_t>((bits >> 48) & 0x8000u);
    if (std::isnan(value)) {
        return static_cast<uint16_t>(sign | 0x7e00u);
    }
    const double magnitude = std::fabs(value);
    if (magnitude >= 65520.0) {  // rounds to infinity (max finite 65504, half-way 65520)
        return static_cast<uint16_t>(sign | 0x7c00u);
    }
    if (magnitude < 0x1p-14) {
        // Subnormal (or zero): a multiple of 2^-24, rounded to nearest even.
        const double scaled = magnitude * 0x1p24;
        return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
    }
    int exponent = 0;
    const double fraction =
        std::frexp(magnitude, &exponent);  // magnitude = fraction * 2^exponent, fraction in [0.5, 1)
    // 11 significant bits: mantissa in [1024, 2048].
    auto mantissa = static_cast<uint32_t>(std::nearbyint(std::ldexp(fraction, 11)));
    int biased = exponent - 1 + 15;
    if (mantissa == 2048) {  // rounding carried into the next binade
        mantissa = 1024;
        ++biased;
    }
    if (biased >= 31) {
        return static_cast<uint16_t>(sign | 0x7c00u);
    }
    return static_cast<uint16_t>(sign | static_cast<uint32_t>(biased) << 10 | (mantissa - 1024));
}

double double_from_float16_bits(uint16_t bits) {
    // Bit assembly rather than ldexp: this runs per kernel coefficient on every API call.
    const bool negative = (bits & 0x8000u) != 0;
    const int exponent = (bits >> 10) & 0x1f;
    const uint64_t mantissa = bits & 0x3ffu;
    if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact
        const double v = static_cast<double>(mantissa) * 0x1p-24;
        return negative ? -v : v;
    }
    if (exponent == 31) {
        return mantissa ? std::nan("") : (negative ? -INFINITY : INFINITY);
    }
    return std::bit_cast<double>(uint64_t(negative) << 63 | uint64_t(exponent - 15 + 1023) << 52 | mantissa << 42);
}

}  // namespace halconv
