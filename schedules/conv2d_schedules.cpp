#include "conv2d_schedules.h"

#include <array>

namespace halconv::sched {

using Halide::TailStrategy;
using Halide::Var;

void cpu_parallel_strips(Halide::Func f, const Var &x, const Var &y, const Var &yo, const Var &yi, int rows, int vec) {
    f.split(y, yo, yi, rows, TailStrategy::GuardWithIf).parallel(yo).vectorize(x, vec, TailStrategy::GuardWithIf);
}

namespace {

// Blocks over (y, x) tiles, and over the batch's images where there is a batch.
void gpu_blocks_of(Halide::Stage stage, const Var &yb, const Var &xb, const std::vector<Var> &batch) {
    if (batch.empty()) {
        stage.gpu_blocks(yb, xb);
    } else {
        stage.gpu_blocks(yb, xb, batch.front());
    }
}

}  // namespace

void gpu_one_per_thread(Halide::Func f, const Var &x, const Var &y, const Var &xi, const std::vector<Var> &batch) {
    Var xo{"xo"}, yo{"yo"}, yi{"yi"};
    f.tile(x, y, xo, yo, xi, yi, gpu_tile_width, gpu_tile_height, TailStrategy::GuardWithIf).reorder(xi, yi, yo, xo);
    gpu_blocks_of(f, yo, xo, batch);
    f.gpu_threads(xi, yi);
}

void gpu_tile_rows(Halide::Stage stage, const Var &x, const Var &y, int rows, const GpuTileVars &v,
                   const std::vector<Var> &batch) {
    // Register blocks (rows > 1) run only on outputs of at least one whole tile, so the
    // last tile of each axis shifts inwards (recomputing a few outputs) instead of
    // being clipped: clipping would put a guard around every unrolled row and keep
    // the rows from sharing loads.
    const TailStrategy tail = rows > 1 ? TailStrategy::ShiftInwards : TailStrategy::GuardWithIf;
    stage.split(x, v.xb, v.xi, gpu_tile_width, tail)
        .split(y, v.yb, v.yr, gpu_tile_height * rows, tail)
        .split(v.yr, v.yi, v.yt, rows, tail)
        .reorder(v.yt, v.xi, v.yi, v.yb, v.xb);
    gpu_blocks_of(stage, v.yb, v.xb, batch);
    stage.gpu_threads(v.xi, v.yi).unroll(v.yt);
}

Halide::Expr gpu_whole_tile(const Halide::Expr &out_width, const Halide::Expr &out_height, int rows) {
    return out_width >= gpu_tile_width && out_height >= gpu_tile_height * rows;
}

void gpu_spread_over_block(Halide::Stage stage, const Var &x, const Var &y, const std::optional<Halide::RVar> &taps) {
    constexpr int threads = gpu_tile_width * gpu_tile_height;
    Var xy{"xy"}, o{"o"}, i{"i"}, u{"u"}, t{"t"}, tx{"tx"}, ty{"ty"};
    stage.fuse(x, y, xy)
        .split(xy, o, i, threads * gpu_loads_in_flight, TailStrategy::GuardWithIf)
        .split(i, u, t, threads)
        .split(t, ty, tx, gpu_tile_width);
    if (taps) {
        stage.reorder(u, *taps, tx, ty, o);
    } else {
        stage.reorder(u, tx, ty, o);
    }
    stage.gpu_threads(tx, ty).unroll(u);
}

void gpu_stage_tile(Halide::Func f, const Var &x, const Var &y, const GpuTileVars &v) {
    f.compute_at(v.block_level);
    gpu_spread_over_block(f, x, y);
}

Halide::Stage gpu_sum_in_registers(Halide::Func sum, const Var &x, const Var &y,
                                   const std::vector<Halide::VarOrRVar> &taps, int max_rows, const GpuTileVars &v) {
    sum.compute_at(v.thread_level)
        .store_in(Halide::MemoryType::Register)
        .bound_storage(x, 1)
        .bound_storage(y, max_rows)
        .unroll(x)
        .unroll(y);
    std::vector<Halide::VarOrRVar> order{x, y};
    order.insert(order.end(), taps.begin(), taps.end());
    Halide::Stage update = sum.update();
    update.reorder(order).unroll(x).unroll(y);
    return update;
}

namespace {

// Edges of the square kernels whose taps both the CPU and the GPU direct sums unroll
// into their own code, where a run-time tap loop costs most per tap.
constexpr std::array<int, 3> unrolled_kernel_edges = {1, 3, 5};

// Reference point: a plain serial loop nest, every tap reading the boundary rule.
void schedule_conv2d_cpu_naive(Conv2dStages &s) {
    s.sum.compute_at(s.output, s.x);
}

// Strips of rows in parallel; the boundary rule is evaluated once per staged sample
// (the strip plus its apron). Outputs go in register blocks of 4 vectors x 2 rows, taps
// outermost, so that a tap's broadcast serves 8 vector multiply-adds and the block's sums
// stay in registers through the tap loops. Outputs of at least one whole block and strip
// shift the last block and strip inwards (recomputing a few outputs) instead of guarding
// them: a guard around the second row kept its sums in memory, one load and store per
// multiply-add. Square 1x1, 3x3 and 5x5 kernels get their taps unrolled.
void schedule_conv2d_cpu_tiled(Conv2dStages &s) {
    const int vec = s.target.natural_vector_size(s.accumulator);
    constexpr int vectors = 4, rows = 2;
    Var yo{"yo"}, yi{"yi"}, yb{"yb"}, yr{"yr"}, xo{"xo"}, xi{"xi"};
    const auto strips = [&](Halide::Stage stage, TailStrategy tail) {
        stage.split(s.y, yo, yi, cpu_direct_strip_rows, tail)
            .split(yi, yb, yr, rows, tail)
            .split(s.x, xo, xi, vec * vectors, tail)
            .reorder(xi, yr, xo, yb, yo)
            .parallel(yo)
            .vectorize(xi, vec)
            .unroll(xi)
            .unroll(yr);
    };
    strips(s.output.specialize(s.out_width >= vec * vectors && s.out_height >= cpu_direct_strip_rows),
           TailStrategy::ShiftInwards);
    strips(s.output, TailStrategy::GuardWithIf);
    s.padded.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.sum.compute_at(s.output, xo).vectorize(s.x, vec).unroll(s.x).unroll(s.y);
    Halide::Stage taps = s.sum.update();
    taps.reorder(s.x, s.y, s.r.x, s.r.y).vectorize(s.x, vec).unroll(s.x).unroll(s.y);
    for (const int k : unrolled_kernel_edges) {
        taps.specialize(s.k_width == k && s.k_height == k).unroll(s.r.x).unroll(s.r.y);
    }
}

// One thread per output pixel, every tap read from global memory through the cache.
// H100, 4096x4096 f32, reflect boundary, median of 20 (2026-11-22,
// bench/results/h100/core-f32-4096.csv): K=3 0.559 ms, K=15 6.54 ms, K=31 25.3 ms.
void schedule_conv2d_gpu_naive(Conv2dStages &s) {
    Var xi{"xi"};
    gpu_one_per_thread(s.output, s.x, s.y, xi, s.batch);
    s.sum.compute_at(s.output, xi);
}

// Each block stages its tile plus apron in shared memory once (boundary rule applied
// there); each thread then computes T consecutive outputs of one column in registers
// (1xT tiling, seed 001 section 3.5.1), taps outermost so a kernel coefficient is
// loaded once for T outputs. T = 4 where the staged tile fits the shared budget, else
// 1. Square 1x1, 3x3 and 5x5 kernels get their own code with the taps unrolled and T = 8:
// loads of the same staged sample by neighbouring outputs fold into one (1x1 through
// the run-time tap loop took 0.112 ms at 4096² f16 on the H100, twice 3x3's 0.056).
// H100, 4096x4096 f32, reflect boundary, median of 20 (2026-11-22,
// bench/results/h100/core-f32-4096.csv): K=3 0.070 ms (63% of the 0.045 ms memory
// floor), K=15 0.734 ms, K=31 2.80 ms. Large K is bound by shared-memory loads: one
// per multiply-add in the run-time tap loop.
void schedule_conv2d_gpu_shared_tiled(Conv2dStages &s) {
    const Halide::Expr row_bytes = gpu_staged_row_bytes(s.k_width, s.storage.bytes(), 0);
    const GpuTileVars v(s.output);
    const Halide::Expr fast = s.near_image;
    constexpr int rows_unrolled = gpu_rows_per_thread_unrolled;
    for (const int k : unrolled_kernel_edges) {
        // near_image as it reads once the branch has substituted k: the simplifier
        // matches the kernel's lazy fold test against this form only.
        using Halide::Internal::substitute;
        const Halide::Expr fast_k = substitute(s.k_height, k, substitute(s.k_width, k, fast));
        gpu_tile_rows(s.output.specialize(fast_k && s.k_width == k && s.k_height == k &&
                                          gpu_whole_tile(s.out_width, s.out_height, rows_unrolled)),
                      s.x, s.y, rows_unrolled, v, s.batch);
    }
    gpu_tile_rows(s.output.specialize(fast && gpu_tile_fits(row_bytes, s.k_height, gpu_rows_per_thread) &&
                                      gpu_whole_tile(s.out_width, s.out_height, gpu_rows_per_thread)),
                  s.x, s.y, gpu_rows_per_thread, v, s.batch);
    gpu_tile_rows(s.output, s.x, s.y, 1, v, s.batch);

    gpu_stage_tile(s.padded, s.x, s.y, v);
    Halide::Stage taps = gpu_sum_in_registers(s.sum, s.x, s.y, {s.r.x, s.r.y}, rows_unrolled, v);
    for (const int k : unrolled_kernel_edges) {
        taps.specialize(s.k_width == k && s.k_height == k).unroll(s.r.x).unroll(s.r.y);
    }
}

}  // namespace

const ScheduleTable<Conv2dStages> &conv2d_schedules() {
    static const ScheduleTable<Conv2dStages> table = {
        {"cpu_naive", schedule_conv2d_cpu_naive},
        {"cpu_tiled", schedule_conv2d_cpu_tiled},
        {"gpu_naive", schedule_conv2d_gpu_naive},
        {"gpu_shared_tiled", schedule_conv2d_gpu_shared_tiled},
    };
    return table;
}

}  // namespace halconv::sched
