#include "tensor_core_schedules.h"

#include "conv2d_schedules.h"

namespace halconv::sched {

void schedule_extended_image_gpu(Halide::Func shifted, const Halide::Var &x, const Halide::Var &y) {
    // A copy with index remapping: one thread per sample, warps along rows.
    shifted.compute_root();
    gpu_one_per_thread(shifted, x, y, Halide::Var{"xi"});
}

void schedule_multichannel_gemm_boundary_gpu(Halide::Func shifted, const Halide::Var &c, const Halide::Var &x,
                                             const Halide::Var &y) {
    // A copy with index remapping, channels and columns fused into one thread index so
    // that consecutive threads write consecutive samples whatever the channel count.
    Halide::Var cx{"cx"}, cxo{"cxo"}, cxi{"cxi"}, yo{"yo"}, yi{"yi"};
    shifted.compute_root().fuse(c, x, cx).gpu_tile(cx, y, cxo, yo, cxi, yi, 256, 1, Halide::TailStrategy::GuardWithIf);
}

}  // namespace halconv::sched
