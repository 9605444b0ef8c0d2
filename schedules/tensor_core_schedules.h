// Named schedules for the Halide stages around the tensor-core extern stages
// (generators/tensor_core_generator.cpp). The extern stage itself is hand-written CUDA
// (runtime_kernels/); what Halide schedules is the boundary stage that feeds it.
#pragma once

#include "Halide.h"

namespace halconv::sched {

// The image extended by the boundary rule and placed for the mode, materialized on the
// GPU over the region the extern stage asks for (output plus the kernel's halo).
void schedule_tensor_core_boundary_gpu(Halide::Func shifted, const Halide::Var &x, const Halide::Var &y);

}  // namespace halconv::sched
