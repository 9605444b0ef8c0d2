#include "low_rank_schedules.h"

#include "conv2d_schedules.h"

namespace halconv::sched {

using Halide::TailStrategy;
using Halide::Var;

namespace {

// Strips of rows in parallel. Per strip: the boundary-extended input staged once, then
// per rank (outermost) that rank's row pass over the strip plus the column apron and its
// column pass added into the strip's sums, so a strip holds one rank's row sums whatever
// the rank.
void schedule_low_rank_cpu(LowRankStages &s) {
    const int vec = s.target.natural_vector_size(s.accumulator);
    Var yo{"yo"}, yi{"yi"};
    cpu_parallel_strips(s.output, s.x, s.y, yo, yi, cpu_separable_strip_rows, vec);
    s.padded.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.sum.compute_at(s.output, yo).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.sum.update().reorder(s.rc.x, s.x, s.y, s.rc.y).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.rows.compute_at(s.sum, s.rc.y).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.rows.update().vectorize(s.x, vec, TailStrategy::GuardWithIf);
}

// Per rank (outermost), the row pass over the whole image, rows in parallel, then its
// column pass added into the image's sums: any kernel height costs the row passes nothing
// extra, and memory holds one rank's row sums (two image-sized buffers in all).
void schedule_low_rank_cpu_two_pass(LowRankStages &s) {
    const int vec = s.target.natural_vector_size(s.accumulator);
    Halide::Func rows_out = s.rows.in();
    Var yo{"yo"}, yi{"yi"};
    s.sum.compute_root();
    cpu_parallel_strips(s.sum, s.x, s.y, yo, yi, 8, vec);
    s.sum.update()
        .reorder(s.rc.x, s.x, s.y, s.rc.y)
        .split(s.y, yo, yi, 8, TailStrategy::GuardWithIf)
        .parallel(yo)
        .vectorize(s.x, vec, TailStrategy::GuardWithIf);
    rows_out.compute_at(s.sum, s.rc.y);
    cpu_parallel_strips(rows_out, s.x, s.y, yo, yi, 8, vec);
    s.padded.compute_at(rows_out, yi).vectorize(s.x, vec, TailStrategy::GuardWithIf);
    s.rows.compute_at(rows_out, s.x).vectorize(s.x);
    s.rows.update().vectorize(s.x);
    cpu_parallel_strips(s.output, s.x, s.y, yo, yi, 8, vec);
}

// Per block, as gpu_separable: the input tile plus apron staged in shared memory once,
// the row passes of every rank beside it (so the shared budget bounds kernel size times
// rank: limit gpu_low_rank_tile), the column passes summed in registers, ranks outermost.
void schedule_low_rank_gpu(LowRankStages &s) {
    const Halide::Expr row_bytes =
        gpu_staged_row_bytes(s.k_width, s.storage.bytes(), 0) + gpu_tile_width * s.accumulator.bytes() * s.rank;
    const GpuTileVars v(s.output);
    gpu_tile_rows(s.output.specialize(s.near_image && gpu_tile_fits(row_bytes, s.k_height, gpu_rows_per_thread) &&
                                      gpu_whole_tile(s.out_width, s.out_height, gpu_rows_per_thread)),
                  s.x, s.y, gpu_rows_per_thread, v);
    gpu_tile_rows(s.output, s.x, s.y, 1, v);

    gpu_stage_tile(s.padded, s.x, s.y, v);
    gpu_stage_tile(s.rows, s.x, s.y, v);
    gpu_spread_over_block(s.rows.update(), s.x, s.y, Halide::RVar(s.rr));
    gpu_sum_in_registers(s.sum, s.x, s.y, {s.rc.x, s.rc.y}, gpu_rows_per_thread, v);
}

// Per rank (outermost, on the host), a kernel for the row pass into device memory and one
// adding its column pass into the image's sums, each thread summing its taps in a
// register: no shared memory, any kernel, and memory for one rank's row sums.
void schedule_low_rank_gpu_two_pass(LowRankStages &s) {
    Halide::Func rows_out = s.rows.in();
    Var xi{"xi"}, yi{"yi"}, xo{"xo"}, yo{"yo"};
    s.sum.compute_root();
    gpu_one_per_thread(s.sum, s.x, s.y, xi);
    s.sum.update()
        .reorder(s.rc.x, s.x, s.y, s.rc.y)
        .tile(s.x, s.y, xo, yo, xi, yi, gpu_tile_width, gpu_tile_height, TailStrategy::GuardWithIf)
        .reorder(xi, yi, yo, xo)
        .gpu_blocks(yo, xo)
        .gpu_threads(xi, yi);
    rows_out.compute_at(s.sum, s.rc.y);
    gpu_one_per_thread(rows_out, s.x, s.y, xi);
    s.rows.compute_at(rows_out, xi);
    gpu_one_per_thread(s.output, s.x, s.y, xi);
}

}  // namespace

const ScheduleTable<LowRankStages> &low_rank_schedules() {
    static const ScheduleTable<LowRankStages> table = {
        {"cpu_low_rank", schedule_low_rank_cpu},
        {"gpu_low_rank", schedule_low_rank_gpu},
        {"cpu_low_rank_two_pass", schedule_low_rank_cpu_two_pass},
        {"gpu_low_rank_two_pass", schedule_low_rank_gpu_two_pass},
    };
    return table;
}

}  // namespace halconv::sched
