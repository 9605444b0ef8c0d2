// The sliding separable pass's window arithmetic (separable_sliding.cu): a thread's eight
// consecutive sums of k taps, the samples streaming through registers. Plain C++ with the
// loads passed in, so that the CPU tests check the arithmetic the kernel runs
// (tests/test_sliding_window.cpp).
#pragma once

#include "common/host_device.h"
#include "separable/separable_sliding.h"

namespace halconv::rk::sep {

// acc[t] += sum_{ii < 8} tap[ii] * window(t + ii), t < 8, the window's samples 0..7 in a
// and 8..15 in b.
template <typename A>
HALCONV_HOST_DEVICE_INLINE void multiply_block(A (&acc)[sliding_outputs_per_thread],
                                               const A (&tap)[sliding_outputs_per_thread],
                                               const A (&a)[sliding_outputs_per_thread],
                                               const A (&b)[sliding_outputs_per_thread]) {
    constexpr int T = sliding_outputs_per_thread;
    HALCONV_UNROLL
    for (int ii = 0; ii < T; ii++) {
        HALCONV_UNROLL
        for (int t = 0; t < T; t++) {
            acc[t] += tap[ii] * (t + ii < T ? a[t + ii] : b[t + ii - T]);
        }
    }
}

// acc[t] += sum_{i < k} taps[i] * window(t + i), t < 8: the window's samples stream
// through registers a block of eight at a time (load(b, w) puts samples 8 b .. 8 b + 7
// in w), each feeding up to eight sums; load_taps(i, w) puts taps i .. i + 7 in w (the
// list padded to a multiple of 8). Blocks are read up to ceil(k / 8); a sample is
// multiplied only by a tap it meets (padding taps never are: 0 * inf would be a NaN the
// definition has not).
// (Measured: two blocks a step, with the ring by columns, 8-13 % faster from K = 31 on the
// H200, bench/results/h200/separable/ring-by-columns-2026-11-28/. On the H100 before, a
// 16-byte-aligned stage with the window shifted inside its first block, and the loop
// unrolled over every block of the window, were both slower: the extra code cost more
// than the moves and per-sample copies they save.)
template <typename A, typename LoadTaps, typename Load>
HALCONV_HOST_DEVICE_INLINE void slide(A (&acc)[sliding_outputs_per_thread], int k, LoadTaps &&load_taps, Load &&load) {
    constexpr int T = sliding_outputs_per_thread;
    A a[T], b[T], tap[T];
    load(0, a);
    int i = 0;
    // Two blocks a step, the window's halves trading places: moving the second half into
    // the first after every block cost 8 moves per 64 multiply-adds.
    for (; i + 2 * T <= k; i += 2 * T) {
        load(i / T + 1, b);
        load_taps(i, tap);
        multiply_block(acc, tap, a, b);
        load(i / T + 2, a);
        load_taps(i + T, tap);
        multiply_block(acc, tap, b, a);
    }
    if (i + T <= k) {
        load(i / T + 1, b);
        load_taps(i, tap);
        multiply_block(acc, tap, a, b);
        HALCONV_UNROLL
        for (int m = 0; m < T; m++) {
            a[m] = b[m];
        }
        i += T;
    }
    if (i < k) {
        load(i / T + 1, b);
        load_taps(i, tap);
        HALCONV_UNROLL
        for (int ii = 0; ii < T - 1; ii++) {
            if (i + ii < k) {
                HALCONV_UNROLL
                for (int t = 0; t < T; t++) {
                    acc[t] += tap[ii] * (t + ii < T ? a[t + ii] : b[t + ii - T]);
                }
            }
        }
    }
}

}  // namespace halconv::rk::sep
