#include "conv2d_schedules.h"

#include "halconv/types.h"

namespace halconv::sched {

using Halide::TailStrategy;
using Halide::Var;

Halide::Expr gpu_rows_per_thread(const Halide::Expr &staged_bytes_per_row, const Halide::Expr &k_height) {
    const Halide::Expr rows_that_fit = gpu_shared_budget_bytes / staged_bytes_per_row;
    return Halide::clamp((rows_that_fit - (k_height - 1)) / gpu_tile_height, 1, gpu_max_rows_per_thread);
}

// Reference point: a plain serial loop nest, every tap reading the boundary rule.
void schedule_conv2d_cpu_naive(Conv2dStages &s) {
    s.sum.compute_at(s.output, s.x);
}

// Strips of rows in parallel; the boundary rule is evaluated once per staged sample
// (the strip plus its apron), and the taps run over vectors of outputs.
void schedule_conv2d_cpu_tiled(Conv2dStages &s) {
    const int vec = s.target.natural_vector_size(s.accumulator);
    Var yo{"yo"}, yi{"yi"};
    s.output.split(s.y, yo, yi, 8, TailStrategy::GuardWithIf)
        .parallel(yo)
        .vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.padded.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.sum.compute_at(s.output, s.x).vectorize(s.x);
    s.sum.update().reorder(s.x, s.r.x, s.r.y).vectorize(s.x);
}

// One thread per output pixel, every tap read from global memory through the cache.
// H100, 4096x4096 f32: see bench/results (K=3/15/31).
void schedule_conv2d_gpu_naive(Conv2dStages &s) {
    Var xo{"xo"}, yo{"yo"}, xi{"xi"}, yi{"yi"};
    s.output.gpu_tile(s.x, s.y, xo, yo, xi, yi, gpu_tile_width, gpu_tile_height, TailStrategy::GuardWithIf);
    s.sum.compute_at(s.output, xi);
}

// Each block stages its tile plus apron in shared memory once (boundary rule applied
// there), then every thread computes T outputs in one column of the tile (1xT tiling),
// T chosen from the shared-memory budget at run time.
// H100, 4096x4096 f32: see bench/results (K=3/15/31).
void schedule_conv2d_gpu_shared_tiled(Conv2dStages &s) {
    const Halide::Expr row_bytes = (gpu_tile_width + s.k_width - 1) * s.storage.bytes();
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
    s.sum.compute_at(s.output, yt);
}

}  // namespace halconv::sched
