#include "tensor_core_schedules.h"

#include "halconv/types.h"

namespace halconv::sched {

void schedule_tensor_core_boundary_gpu(Halide::Func shifted, const Halide::Var &x, const Halide::Var &y) {
    // A copy with index remapping: one thread per sample, warps along rows.
    Halide::Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    shifted.compute_root().gpu_tile(x, y, xo, yo, xi, yi, gpu_tile_width, gpu_tile_height,
                                    Halide::TailStrategy::GuardWithIf);
}

}  // namespace halconv::sched
