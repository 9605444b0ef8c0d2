// Named schedules for the low-rank convolution (generators/low_rank_generator.cpp).
#pragma once

#include "Halide.h"
#include "schedule_table.h"

namespace halconv::sched {

// The stages of rows(x, y, k) = sum_i row_factors(i, k) * padded(x + i - ox, y), then
// output(x, y) = sum_k sum_j col_factors(j, k) * rows(x, y + j - oy, k).
struct LowRankStages {
    Halide::Func output;  // the generator's output
    Halide::Func sum;     // column passes: pure 0 plus one update over rc (taps inner, ranks outer)
    Halide::Func rows;    // row passes, one plane per rank: pure 0 plus one update over rr
    Halide::Func padded;  // the image extended by the boundary rule
    Halide::Var x, y, k;  // k: the rank plane of rows
    Halide::RDom rr, rc;  // row taps (k_width); column taps (k_height) x ranks
    Halide::Expr k_width, k_height, rank;
    Halide::Expr out_width, out_height;  // extents of the output buffer
    Halide::Expr near_image;             // every position read is within one fold of the image (remap_index)
    Halide::Type storage, accumulator;
    Halide::Target target;
};

// Every schedule of low_rank by name: the separable schedules' structure
// (separable_schedules.h), ranks outermost except in gpu_low_rank (every rank's row sums
// in its shared tile). *_two_pass: per rank, the row pass over the whole image into
// memory, then the column pass; for kernels whose apron would outgrow a strip (CPU) or
// the shared tile (GPU).
const ScheduleTable<LowRankStages> &low_rank_schedules();

}  // namespace halconv::sched
