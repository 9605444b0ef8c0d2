// The schedule of the FFT convolution (generators/fft_generator.cpp): what runs per tile
// pair, what once per call, and how each transform stage is vectorized.
#pragma once

#include <vector>

#include "Halide.h"
#include "fft.h"

namespace halconv::sched {

struct FftStages {
    Halide::Func output;
    Halide::Var x, y;
    Halide::Expr step_x, step_y;  // outputs per tile and axis (T - kw + 1, T - kh + 1)
    Halide::Func spectrum;        // the kernel's scaled spectrum, (k_b, k_a)
    // Every transform in the order the pipeline runs them; the first kernel_transforms
    // (and transposes[0]) compute the spectrum, the rest run per pair of tiles.
    std::vector<gen::fft::Transform> transforms;
    // transposes[n] reads the result of transforms[2 n].
    std::vector<Halide::Func> transposes;
    int kernel_transforms = 2;
    int tile = 0;  // T
    Halide::Type work;
    Halide::Target target;
};

// CPU: pairs of tiles in parallel; within one, every stage over its whole T x T block,
// vectorized across the dimension it does not transform.
void schedule_fft_cpu(FftStages &s);

}  // namespace halconv::sched
