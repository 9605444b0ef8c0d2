// Named schedules for the unsharp-mask pipeline (generators/unsharp_generator.cpp).
#pragma once

#include <map>
#include <string>

#include "Halide.h"

namespace halconv::sched {

// cpu_tiled: the blur as a Halide sum; gpu_tensor_core: the blur is the tensor-core
// extern stage, the other stages Halide GPU kernels around it.
enum class UnsharpSchedule { cpu_tiled, gpu_tensor_core };

inline const std::map<std::string, UnsharpSchedule> unsharp_schedule_names = {
    {"cpu_tiled", UnsharpSchedule::cpu_tiled},
    {"gpu_tensor_core", UnsharpSchedule::gpu_tensor_core},
};

struct UnsharpStages {
    Halide::Func output;   // input + amount * (input - blur)
    Halide::Func blur;     // CPU: pure 0 plus one update over r; GPU: the extern stage
    Halide::Func shifted;  // the float16 image, extended and placed for a valid correlation
    Halide::Var x, y;
    Halide::RDom r;  // kernel taps (CPU)
    Halide::Target target;
};

void schedule_unsharp_cpu_tiled(UnsharpStages &s);
void schedule_unsharp_gpu_tensor_core(UnsharpStages &s);

}  // namespace halconv::sched
