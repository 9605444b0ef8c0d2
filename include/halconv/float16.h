// IEEE binary16 conversions for filling and reading Float(16) buffers, for programs
// that do not use the compiler's _Float16 themselves (it is not standard C++20).
#pragma once

#include <cstdint>

namespace halconv {

// Nearest binary16 (ties to even); overflow gives +-infinity, NaN stays NaN.
uint16_t float16_bits_from_double(double value);
double double_from_float16_bits(uint16_t bits);

}  // namespace halconv
