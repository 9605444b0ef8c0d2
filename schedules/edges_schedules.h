// Named schedules for the edge-detection pipeline (generators/edges_generator.cpp):
// the same algorithm fused on the CPU (every stage computed per strip, intermediates in
// cache) or stage by stage (every stage a whole image in memory, as separate library
// calls would run it). The fused form on CUDA is a hand-written kernel (EdgesCuda).
#pragma once

#include "Halide.h"
#include "schedule_table.h"

namespace halconv::sched {

// padded -> blur_x (Gaussian rows) -> blur (Gaussian columns) -> extended by the
// boundary rule -> laplacian -> output (threshold).
struct EdgesStages {
    Halide::Func output, laplacian, blur, blur_x, padded;
    Halide::Var x, y;
    Halide::Expr clamps;    // the boundary is constant or nearest: the blur's apron is clamped
    Halide::Expr near;      // every read lies within one fold of the image (remap_index)
    Halide::Expr boundary;  // the rule (a halconv::Boundary value)
    Halide::Target target;
};

// Every schedule of edges by name.
const ScheduleTable<EdgesStages> &edges_schedules();

}  // namespace halconv::sched
