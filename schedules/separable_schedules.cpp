#include "separable_schedules.h"

#include "conv2d_schedules.h"
#include "halconv/types.h"

namespace halconv::sched {

using Halide::TailStrategy;
using Halide::Var;

// Strips of rows in parallel; each strip runs the row pass over its rows plus the
// column apron into a strip-sized buffer, then the column pass, all vectorized.
void schedule_separable_cpu(SeparableStages &s) {
    const int vec = s.target.natural_vector_size(s.accumulator);
    Var yo{"yo"}, yi{"yi"};
    s.output.split(s.y, yo, yi, 32, TailStrategy::GuardWithIf)
        .parallel(yo)
        .vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.padded.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.rows.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.rows.update().vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.sum.compute_at(s.output, s.x).vectorize(s.x);
    s.sum.update().vectorize(s.x);
}

// Per block: the input tile plus apron and the row-pass results both live in shared
// memory, so the intermediate never goes to device memory; each thread then computes
// T outputs of one column (1xT tiling, T from the shared-memory budget).
// H100, 4096x4096 f32 Gaussian K=31: see bench/results.
void schedule_separable_gpu(SeparableStages &s) {
    const Halide::Expr row_bytes =
        (gpu_tile_width + s.k_width - 1) * s.storage.bytes() + gpu_tile_width * s.accumulator.bytes();
    const Halide::Expr rows_per_thread = gpu_rows_per_thread(row_bytes, s.k_height);
    Var xb{"xb"}, yb{"yb"}, xi{"xi"}, yr{"yr"}, yt{"yt"}, yi{"yi"};
    s.output.split(s.x, xb, xi, gpu_tile_width, TailStrategy::GuardWithIf)
        .split(s.y, yb, yr, gpu_tile_height * rows_per_thread, TailStrategy::GuardWithIf)
        .split(yr, yt, yi, gpu_tile_height, TailStrategy::GuardWithIf)
        .reorder(yt, xi, yi, xb, yb)
        .gpu_blocks(xb, yb)
        .gpu_threads(xi, yi);
    Var px{"px"}, py{"py"}, pxi{"pxi"}, pyi{"pyi"};
    s.padded.compute_at(s.output, xb)
        .tile(s.x, s.y, px, py, pxi, pyi, gpu_tile_width, gpu_tile_height, TailStrategy::GuardWithIf)
        .gpu_threads(pxi, pyi);
    Var rx{"rx"}, ry{"ry"}, rxi{"rxi"}, ryi{"ryi"};
    s.rows.compute_at(s.output, xb)
        .tile(s.x, s.y, rx, ry, rxi, ryi, gpu_tile_width, gpu_tile_height, TailStrategy::GuardWithIf)
        .gpu_threads(rxi, ryi);
    s.rows.update()
        .tile(s.x, s.y, rx, ry, rxi, ryi, gpu_tile_width, gpu_tile_height, TailStrategy::GuardWithIf)
        .gpu_threads(rxi, ryi);
    s.sum.compute_at(s.output, yt);
}

}  // namespace halconv::sched
