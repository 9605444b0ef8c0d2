// Named schedules for the separable convolution (generators/separable_generator.cpp).
#pragma once

#include "Halide.h"
#include "schedule_table.h"

namespace halconv::sched {

// The stages of rows(x, y) = sum_i row_kern(i) * padded(x + i - ox, y), then
// output(x, y) = sum_j col_kern(j) * rows(x, y + j - oy).
struct SeparableStages {
    Halide::Func output;  // the generator's output
    Halide::Func sum;     // column pass: pure 0 plus one update over rc
    Halide::Func rows;    // row pass: pure 0 plus one update over rr
    Halide::Func padded;  // the image extended by the boundary rule
    Halide::Var x, y;
    Halide::RDom rr, rc;                 // row taps (extent k_width), column taps (k_height)
    Halide::Expr k_width, k_height;      // row and column kernel lengths
    Halide::Expr out_width, out_height;  // extents of the output buffer
    Halide::Expr near_image;             // every position read is within one fold of the image (remap_index)
    Halide::Type storage, accumulator;
    Halide::Target target;
};

// Every schedule of separable by name. *_two_pass: the row pass over the whole image
// into memory, then the column pass; for kernels whose apron would outgrow a strip
// (CPU) or the shared tile (GPU).
const ScheduleTable<SeparableStages> &separable_schedules();

}  // namespace halconv::sched
