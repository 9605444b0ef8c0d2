#include "tensor_core_schedules.h"

#include "conv2d_schedules.h"

namespace halconv::sched {

void schedule_tensor_core_boundary_gpu(Halide::Func shifted, const Halide::Var &x, const Halide::Var &y) {
    // A copy with index remapping: one thread per sample, warps along rows.
    shifted.compute_root();
    gpu_one_per_thread(shifted, x, y, Halide::Var{"xi"});
}

}  // namespace halconv::sched
