// The shape of fft_line.cuh's transforms, in plain C++ so that the hosts that size their
// scratch (separable_fft.h) and the kernels read one rule: the radix passes of an N-point
// transform with S points per thread, and the layout of the per-pass twiddle tables.
//
// Pass p has radix R_p = S while S divides what is left (the last one takes the rest) and
// span Ns_p = R_0 ... R_{p-1}. Its butterfly k (mod Ns_p) multiplies point r by w^(k r),
// w = exp(-2 pi i / (Ns_p R_p)). The 4096-entry table holds w^(k r) at
// (k r) 4096 / (Ns_p R_p): a warp's consecutive butterflies read entries far apart there
// (up to 32 cache lines a load). The pass tables hold the same values pass by pass, entry
// (k, r) of pass p >= 1 at pass_table_offset(N, S, p) + (r - 1) Ns_p + k, so that
// consecutive butterflies read consecutive entries. Pass 0 (span 1) has none.
#pragma once

#include "common/host_device.h"

namespace halconv::rk::fft_line {

inline constexpr int kTableSize = 4096;

HALCONV_HOST_DEVICE constexpr int radix_of(int n, int s, int pass) {
    for (int p = 0;; p++) {
        const int r = n >= s ? s : n;
        if (p == pass) {
            return r;
        }
        n /= r;
    }
}
HALCONV_HOST_DEVICE constexpr int passes_of(int n, int s) {
    int p = 0;
    while (n > 1) {
        n /= n >= s ? s : n;
        p++;
    }
    return p;
}
HALCONV_HOST_DEVICE constexpr int span_of(int n, int s, int pass) {
    int ns = 1;
    for (int p = 0; p < pass; p++) {
        ns *= radix_of(n, s, p);
    }
    return ns;
}

HALCONV_HOST_DEVICE constexpr int pass_table_offset(int n, int s, int pass) {
    int at = 0;
    for (int p = 1; p < pass; p++) {
        at += span_of(n, s, p) * (radix_of(n, s, p) - 1);
    }
    return at;
}
// Entries of all the pass tables of an N-point transform (fewer than N log_S N).
HALCONV_HOST_DEVICE constexpr int pass_table_size(int n, int s) {
    return pass_table_offset(n, s, passes_of(n, s));
}
// The index into the 4096-entry table of pass-table entry i (i < pass_table_size).
HALCONV_HOST_DEVICE constexpr int pass_table_source(int n, int s, int i) {
    for (int p = 1; p < passes_of(n, s); p++) {
        const int ns = span_of(n, s, p), r = radix_of(n, s, p);
        if (i < ns * (r - 1)) {
            return (i % ns) * (i / ns + 1) * (kTableSize / (ns * r));
        }
        i -= ns * (r - 1);
    }
    return 0;
}

}  // namespace halconv::rk::fft_line
