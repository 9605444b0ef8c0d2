#include "tensor_core_schedules.h"

#include "conv2d_schedules.h"

namespace halconv::sched {

void schedule_extended_image_gpu(Halide::Func shifted, const Halide::Var &x, const Halide::Var &y,
                                 const std::vector<Halide::Var> &batch) {
    // A copy with index remapping: one thread per sample, warps along rows.
    shifted.compute_root();
    gpu_one_per_thread(shifted, x, y, Halide::Var{"xi"}, batch);
}

void schedule_multichannel_gemm_boundary_gpu(Halide::Func shifted, const Halide::Var &c, const Halide::Var &x,
                                             const Halide::Var &y) {
    // A copy with index remapping, channels and columns fused into one thread index so
    // that consecutive threads write consecutive samples whatever the channel count.
    // Rows on blockIdx.x (gpu_one_per_thread says why).
    Halide::Var cx{"cx"}, cxo{"cxo"}, cxi{"cxi"};
    shifted.compute_root()
        .fuse(c, x, cx)
        .split(cx, cxo, cxi, 256, Halide::TailStrategy::GuardWithIf)
        .reorder(cxi, y, cxo)
        .gpu_blocks(y, cxo)
        .gpu_threads(cxi);
}

}  // namespace halconv::sched
