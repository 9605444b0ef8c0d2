// The sliding separable pass's window arithmetic (separable_sliding.cu): a thread's eight
// consecutive sums of k taps, the samples streaming through registers. Plain C++ with the
// loads passed in, so that the CPU tests check the arithmetic the kernel runs
// (tests/test_sliding_window.cpp).
#pragma once

#include "common/host_device.h"
#include "separable/separable_sliding.h"

namespace halconv::rk::sep {

// acc[t] += sum_{ii < R} tap[ii] * window(t + ii), t < 8, the window's samples 0..7 in a
// and 8..15 in b: a block of taps (R = 8) or its first R.
template <int R, typename A>
HALCONV_HOST_DEVICE_INLINE void multiply_part(A (&acc)[sliding_outputs_per_thread],
                                              const A (&tap)[sliding_outputs_per_thread],
                                              const A (&a)[sliding_outputs_per_thread],
                                              const A (&b)[sliding_outputs_per_thread]) {
    constexpr int T = sliding_outputs_per_thread;
    HALCONV_UNROLL
    for (int ii = 0; ii < R; ii++) {
        HALCONV_UNROLL
        for (int t = 0; t < T; t++) {
            acc[t] += tap[ii] * (t + ii < T ? a[t + ii] : b[t + ii - T]);
        }
    }
}
template <typename A>
HALCONV_HOST_DEVICE_INLINE void multiply_block(A (&acc)[sliding_outputs_per_thread],
                                               const A (&tap)[sliding_outputs_per_thread],
                                               const A (&a)[sliding_outputs_per_thread],
                                               const A (&b)[sliding_outputs_per_thread]) {
    multiply_part<sliding_outputs_per_thread>(acc, tap, a, b);
}

// A block's first r taps, 0 < r < 8, a case each (a uniform test per tap costs 3
// instructions per 8 multiply-adds).
template <typename A>
HALCONV_HOST_DEVICE_INLINE void multiply_last(A (&acc)[sliding_outputs_per_thread],
                                              const A (&tap)[sliding_outputs_per_thread],
                                              const A (&a)[sliding_outputs_per_thread],
                                              const A (&b)[sliding_outputs_per_thread], int r) {
    static_assert(sliding_outputs_per_thread == 8, "a case per remainder");
    switch (r) {
        case 1:
            multiply_part<1>(acc, tap, a, b);
            break;
        case 2:
            multiply_part<2>(acc, tap, a, b);
            break;
        case 3:
            multiply_part<3>(acc, tap, a, b);
            break;
        case 4:
            multiply_part<4>(acc, tap, a, b);
            break;
        case 5:
            multiply_part<5>(acc, tap, a, b);
            break;
        case 6:
            multiply_part<6>(acc, tap, a, b);
            break;
        default:
            multiply_part<7>(acc, tap, a, b);
            break;
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
    // The last full block and the last 1-7 taps; after a full block the window's halves
    // trade places again (moving b into a cost 8 moves).
    if (i + T <= k) {
        load(i / T + 1, b);
        load_taps(i, tap);
        multiply_block(acc, tap, a, b);
        i += T;
        if (i < k) {
            load(i / T + 1, a);
            load_taps(i, tap);
            multiply_last(acc, tap, b, a, k - i);
        }
    } else if (i < k) {
        load(i / T + 1, b);
        load_taps(i, tap);
        multiply_last(acc, tap, a, b, k - i);
    }
}

}  // namespace halconv::rk::sep
