// The compiler's _Float16 (GCC >= 12, Clang >= 15 on x86-64) does the conversions:
// double -> _Float16 rounds once, to nearest even (no double rounding through float),
// overflow to infinity and NaN kept; _Float16 -> double is exact.
#include "halconv/float16.h"

#include <bit>

namespace halconv {

uint16_t float16_bits_from_double(double value) {
    return std::bit_cast<uint16_t>(static_cast<_Float16>(value));
}

double double_from_float16_bits(uint16_t bits) {
    return static_cast<double>(std::bit_cast<_Float16>(bits));
}

}  // namespace halconv
