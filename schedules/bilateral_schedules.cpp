#include "bilateral_schedules.h"

#include "conv2d_schedules.h"

namespace halconv::sched {

using Halide::TailStrategy;
using Halide::Var;

namespace {

// Strips of rows in parallel, the extended image of each strip plus its apron staged once,
// the window's taps over vectors of outputs; the spatial weights computed once per call.
void schedule_bilateral_cpu_tiled(BilateralStages &s) {
    const int vec = s.target.natural_vector_size(s.accumulator);
    Var yo{"yo"}, yi{"yi"};
    cpu_parallel_strips(s.output, s.x, s.y, yo, yi, 8, vec);
    s.spatial.compute_root();
    s.padded.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.sum.compute_at(s.output, s.x).vectorize(s.x);
    s.sum.update().reorder(s.x, s.r.x, s.r.y).vectorize(s.x);
}

// Blocks of gpu_tile_width x gpu_tile_height threads, each thread gpu_rows_per_thread
// outputs of one column where the taller tile fits (one elsewhere), the block's tile plus
// its apron staged in shared memory (limit gpu_bilateral_tile bounds the radius for one
// row per thread), the spatial weights per block beside it, the sums in registers.
void schedule_bilateral_gpu_tiled(BilateralStages &s) {
    const Halide::Expr window = 2 * s.radius + 1;
    const Halide::Expr row_bytes = gpu_staged_row_bytes(window, s.storage.bytes(), 0);
    const GpuTileVars v(s.output);
    gpu_tile_rows(s.output.specialize(gpu_tile_fits(row_bytes, window, gpu_rows_per_thread) &&
                                      gpu_whole_tile(s.out_width, s.out_height, gpu_rows_per_thread)),
                  s.x, s.y, gpu_rows_per_thread, v);
    gpu_tile_rows(s.output, s.x, s.y, 1, v);
    gpu_stage_tile(s.padded, s.x, s.y, v);
    s.spatial.compute_at(v.block_level).gpu_threads(s.spatial.args()[0]);
    gpu_sum_in_registers(s.sum, s.x, s.y, {s.r.x, s.r.y}, gpu_rows_per_thread, v);
}

}  // namespace

const ScheduleTable<BilateralStages> &bilateral_schedules() {
    static const ScheduleTable<BilateralStages> table = {
        {"cpu_tiled", schedule_bilateral_cpu_tiled},
        {"gpu_tiled", schedule_bilateral_gpu_tiled},
    };
    return table;
}

}  // namespace halconv::sched
