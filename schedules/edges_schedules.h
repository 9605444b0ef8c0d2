// Named schedules for the edge-detection pipeline (generators/edges_generator.cpp):
// the same algorithm fused (every stage computed per tile, intermediates in cache or
// shared memory) or stage by stage (every stage a whole image in memory, as separate
// library calls would run it).
#pragma once

#include <map>
#include <string>

#include "Halide.h"

namespace halconv::sched {

enum class EdgesSchedule { cpu_fused, cpu_staged, gpu_fused, gpu_staged };

inline const std::map<std::string, EdgesSchedule> edges_schedule_names = {
    {"cpu_fused", EdgesSchedule::cpu_fused},
    {"cpu_staged", EdgesSchedule::cpu_staged},
    {"gpu_fused", EdgesSchedule::gpu_fused},
    {"gpu_staged", EdgesSchedule::gpu_staged},
};

// padded -> blur_x (Gaussian rows) -> blur (Gaussian columns) -> extended by the
// boundary rule -> laplacian -> output (threshold).
struct EdgesStages {
    Halide::Func output, laplacian, blur, blur_x, padded;
    Halide::Var x, y;
    Halide::Expr out_width, out_height;
    Halide::Expr near_image;  // every position read is within one fold of the image (remap_index)
    Halide::Target target;
};

void schedule_edges_cpu_fused(EdgesStages &s);
void schedule_edges_cpu_staged(EdgesStages &s);
void schedule_edges_gpu_fused(EdgesStages &s);
void schedule_edges_gpu_staged(EdgesStages &s);

}  // namespace halconv::sched
