// Named schedules for the direct 2D convolution (generators/conv2d_generator.cpp).
// The generator builds the algorithm and hands its stages here; a GeneratorParam
// picks the function, so schedules swap without touching the algorithm.
#pragma once

#include "Halide.h"

#include <map>
#include <string>

namespace halconv::sched {

enum class Conv2dSchedule { cpu_naive, cpu_tiled, cpu_auto, gpu_naive, gpu_shared_tiled, gpu_auto };

inline const std::map<std::string, Conv2dSchedule> conv2d_schedule_names = {
    {"cpu_naive", Conv2dSchedule::cpu_naive},
    {"cpu_tiled", Conv2dSchedule::cpu_tiled},
    {"cpu_auto", Conv2dSchedule::cpu_auto},
    {"gpu_naive", Conv2dSchedule::gpu_naive},
    {"gpu_shared_tiled", Conv2dSchedule::gpu_shared_tiled},
    {"gpu_auto", Conv2dSchedule::gpu_auto},
};

// The stages of output(x, y) = sum_r kern(r) * padded(x + r.x - ox, y + r.y - oy).
struct Conv2dStages {
    Halide::Func output;   // the generator's output
    Halide::Func sum;      // accumulation, pure definition 0 plus one update over r
    Halide::Func padded;   // the image extended by the boundary rule
    Halide::Var x, y;      // pure variables of all three
    Halide::RDom r;        // kernel taps, extents k_width x k_height
    Halide::Expr k_width, k_height;
    Halide::Type storage, accumulator;
    Halide::Target target;
};

void schedule_conv2d_cpu_naive(Conv2dStages &s);
void schedule_conv2d_cpu_tiled(Conv2dStages &s);
void schedule_conv2d_gpu_naive(Conv2dStages &s);
void schedule_conv2d_gpu_shared_tiled(Conv2dStages &s);

// Rows of outputs each thread of a shared-memory tile computes (1xT tiling): the
// largest T whose staged rows (gpu_tile_height * T + k_height - 1 of them, each
// staged_bytes_per_row long) fit the budget (seed 001 eq. 6-8 with the tiles stacked
// vertically), clamped to [1, gpu_max_rows_per_thread].
Halide::Expr gpu_rows_per_thread(const Halide::Expr &staged_bytes_per_row, const Halide::Expr &k_height);

}  // namespace halconv::sched
