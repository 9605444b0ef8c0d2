// IEEE binary16 conversions for filling and reading Float(16) buffers on hosts whose
// C++ compiler has no _Float16.
#pragma once

#include <cstdint>

namespace halconv {

// Nearest binary16 (ties to even); overflow gives +-infinity, NaN stays NaN.
uint16_t float16_bits_from_double(double value);
double double_from_float16_bits(uint16_t bits);

}  // namespace halconv
