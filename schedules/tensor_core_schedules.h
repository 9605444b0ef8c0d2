// Named schedules for the Halide stages around the hand-written extern stages
// (generators/tensor_core_generator.cpp, generators/multichannel_gemm_generator.cpp). The extern
// stages are CUDA (runtime_kernels/); what Halide schedules is the boundary stage that
// feeds them.
#pragma once

#include <vector>

#include "Halide.h"

namespace halconv::sched {

// The image extended by the boundary rule and placed for the mode, materialized on the
// GPU over the region an extern stage asks for (output plus the kernel's halo): the
// tensor-core, unsharp and cuFFT pipelines; `batch` as for gpu_one_per_thread.
void schedule_extended_image_gpu(Halide::Func shifted, const Halide::Var &x, const Halide::Var &y,
                                 const std::vector<Halide::Var> &batch = {});

// The same for the channels-innermost image of the multichannel GEMM extern stages
// (generators/multichannel_gemm_generator.cpp): shifted(c, x, y) over the channel pitch.
void schedule_multichannel_gemm_boundary_gpu(Halide::Func shifted, const Halide::Var &c, const Halide::Var &x,
                                             const Halide::Var &y);

}  // namespace halconv::sched
