// float32 values as float16 parts at their own weight, two at a time: the split the
// tensor-core probes (separable_tensor_core_f16.cuh, the wgmma probes) share with
// common/split_f32.h's split_in_place, done with paired conversions.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

namespace halconv::rk {

// Two scaled floats as two half2 registers: hi = f16(v), mid = f16(v - hi).
__device__ inline void split_pair(float a, float b, uint32_t &hi, uint32_t &mid) {
    const __half2 h = __floats2half2_rn(a, b);
    const float2 back = __half22float2(h);
    const __half2 m = __floats2half2_rn(a - back.x, b - back.y);
    hi = *reinterpret_cast<const uint32_t *>(&h);
    mid = *reinterpret_cast<const uint32_t *>(&m);
}

}  // namespace halconv::rk
