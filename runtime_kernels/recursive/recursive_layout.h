// The recursive Gaussian's coefficient layout, shared by the host that computes the
// coefficients (src/recursive_gaussian.cpp), the CPU pipeline (generators/
// recursive_gaussian_generator.cpp) and the CUDA stage (recursive/recursive_gaussian.cu).
// Plain C++: no CUDA, no Halide.
//
// Along one axis of length N the filter is Deriche's parallel form with `poles` complex
// poles p_k (and their conjugates): for a line x extended by the boundary rule,
//   out[n] = sum_k 2 Re(a_k Y_k[n] + a_k W_k[n])
//   Y_k[n] = x[n] + p_k Y_k[n-1]            (causal, Y_k[-1] = S_k)
//   W_k[n] = p_k (x[n+1] + W_k[n+1])        (anticausal, W_k[N-1] = p_k T_k)
// where S_k and T_k are the states the infinite extension leaves at the line's ends,
// in closed form per rule (geometric sums over the extension's period):
//   constant:  S = T = gain * fill
//   nearest:   S = gain * x[0],  T = gain * x[N-1]
//   wrap, reflect, mirror: with s = 1 for mirror, else 0,
//     head = sum_{m=s}^{N-1} p^(m-s) x[m],  tail = sum_{m=0}^{N-1-s} p^(N-1-s-m) x[m]
//     S = gain (head_weight * head + tail_weight * tail)
//     T = gain (head_weight * tail + tail_weight * head)
// Mirror along an axis of one sample is nearest (SciPy's rule). The host computes
// gain, head_weight and tail_weight for the axis's rule and length.
#pragma once

#include <cstddef>
#include <cstdint>

#include "common/host_device.h"

namespace halconv::rk::rg {

// Complex poles of the causal half (the fit of exp(-t^2 / 2): src/recursive_gaussian.cpp).
inline constexpr int poles = 3;

// Complex values per pole and axis, each stored as (re, im), in this order.
enum Value : int { pole = 0, weight = 1, gain = 2, head_weight = 3, tail_weight = 4 };
inline constexpr int values_per_pole = 5;
// coefficients(i, axis), axis 0 = x, 1 = y: i = coefficient_index(k, value, part).
inline constexpr int coefficients_per_axis = poles * values_per_pole * 2;
HALCONV_HOST_DEVICE inline constexpr int coefficient_index(int k, Value v, int part) {
    return (k * values_per_pole + int(v)) * 2 + part;
}
// powers(2 k + part, i, axis) = Re / Im of p_k^i, i = 0 .. N (N: the axis's length),
// 0 where |p_k^i| < 2^-60; the table may end before N (its last entry then 0 for every
// pole): readers take p^i from entry min(i, last).
inline constexpr int power_components = 2 * poles;

// The CUDA stage: lines split into segments of `segment` samples, one thread each.
inline constexpr int segment = 64;
// Per segment and pole, the complex states the stage keeps between its kernels: the
// segment's causal end state and anticausal start state.
inline constexpr int states_per_segment = 4 * poles;

inline constexpr int64_t segments_of(int64_t length) {
    return (length + segment - 1) / segment;
}

// Segments (a warp each) per block of the stage's states and filter kernels.
HALCONV_HOST_DEVICE inline constexpr int warps_per_block(int accumulator_bytes) {
    return accumulator_bytes == 8 ? 2 : 4;
}

// The longest line the stage takes: its blocks of segments along the grid's y axis (at
// most 65535).
inline constexpr int64_t max_line(int accumulator_bytes) {
    return int64_t(65535) * warps_per_block(accumulator_bytes) * segment;
}

// Device bytes of the CUDA stage's scratch for a width x height image whose sums take
// accumulator_bytes: the first pass's (transposed) result, the segments' states of the
// longer pass, and two states more per line (mirror's second samples).
inline constexpr size_t workspace_bytes(int64_t width, int64_t height, int accumulator_bytes) {
    const int64_t states =
        states_per_segment * (width * segments_of(height) > height * segments_of(width) ? width * segments_of(height)
                                                                                        : height * segments_of(width));
    const int64_t lines = width > height ? width : height;
    const auto aligned = [](int64_t bytes) { return (size_t(bytes) + 255) / 256 * 256; };
    return aligned(width * height * accumulator_bytes) + aligned(states * accumulator_bytes) +
           aligned(2 * int64_t(poles) * 2 * lines * accumulator_bytes);
}

}  // namespace halconv::rk::rg
