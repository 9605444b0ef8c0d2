// The sliding separable pass's window arithmetic (runtime_kernels/separable/sliding_window.h),
// built for the CPU: the sums the CUDA kernel runs, checked where there is no GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "separable/sliding_window.h"
#include "test_support.h"

namespace {

using halconv::rk::sep::slide;
using halconv::test::rng;
constexpr int T = halconv::rk::sep::sliding_outputs_per_thread;

// Taps and samples for one thread's window of k taps: padding taps (past k, to the block)
// and samples past the last one the window reaches (7 + k) are NaN, so that multiplying
// one makes a sum NaN.
template <typename A>
struct Window {
    std::vector<A> taps, samples;
    Window(int k, std::mt19937_64 &rng) {
        std::uniform_real_distribution<A> d(-1, 1), magnitude(A(0.25), 1);
        const int padded = (k + T - 1) / T * T;
        taps.assign(size_t(padded), std::numeric_limits<A>::quiet_NaN());
        samples.assign(size_t(padded + 2 * T), std::numeric_limits<A>::quiet_NaN());
        for (int i = 0; i < k; i++) {  // no zero tap: infinity times zero is a NaN
            const A m = magnitude(rng);
            taps[size_t(i)] = rng() % 2 ? m : -m;
        }
        for (int j = 0; j < T - 1 + k; j++) {
            samples[size_t(j)] = d(rng);
        }
    }
    void sums(int k, A (&acc)[T]) const {
        for (A &a : acc) {
            a = 0;
        }
        slide(
            acc, k, [&](int i, A(&w)[T]) { std::copy_n(taps.begin() + i, T, w); },
            [&](int b, A(&w)[T]) { std::copy_n(samples.begin() + b * T, T, w); });
    }
};

template <typename A>
void expect_sums_match(double tolerance_per_term) {
    // Fresh random data each run (test_support.h's engine); every count of two-block steps, single blocks and
    // remainders to 200 taps.
    for (int k = 1; k <= 200; k++) {
        for (int trial = 0; trial < 4; trial++) {
            const Window<A> w(k, rng());
            A acc[T];
            w.sums(k, acc);
            for (int t = 0; t < T; t++) {
                double sum = 0, magnitude = 0;
                for (int i = 0; i < k; i++) {
                    const double term = double(w.taps[size_t(i)]) * double(w.samples[size_t(t + i)]);
                    sum += term;
                    magnitude += std::abs(term);
                }
                // Summed in A one term at a time: each addition rounds once (and the
                // product once where it is not fused), so k + 1 roundings of at most the
                // running magnitude.
                ASSERT_NEAR(double(acc[t]), sum, tolerance_per_term * (k + 1) * magnitude)
                    << "k " << k << " output " << t;
            }
        }
    }
}

TEST(SlidingWindow, SumsEveryTapOnceInFloat32) {
    expect_sums_match<float>(std::numeric_limits<float>::epsilon());
}

TEST(SlidingWindow, SumsEveryTapOnceInFloat64) {
    expect_sums_match<double>(std::numeric_limits<double>::epsilon());
}

// A non-finite sample reaches exactly the sums whose taps meet it: the others stay finite
// (a padding tap times it would be a NaN the definition has not).
TEST(SlidingWindow, NonFiniteSampleReachesOnlyTheSumsThatMeetIt) {
    for (int k = 1; k <= 80; k++) {
        for (int j = 0; j < T - 1 + k; j++) {
            Window<float> w(k, rng());
            w.samples[size_t(j)] = std::numeric_limits<float>::infinity();
            float acc[T];
            w.sums(k, acc);
            for (int t = 0; t < T; t++) {
                const bool meets = j >= t && j < t + k;
                EXPECT_EQ(std::isinf(acc[t]), meets) << "k " << k << " sample " << j << " output " << t;
                EXPECT_FALSE(std::isnan(acc[t])) << "k " << k << " sample " << j << " output " << t;
            }
        }
    }
}

}  // namespace
