// The host-CPU rows of halconv_bench's pipelines report: the edge pipeline on the CPU
// against this host's memory floor, measured in the same run (issue 22's target: fused
// edges at >= 50 % of the floor on the CPU as on the GPU).
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "gpu_common.h"

namespace halconv::bench {

// The host's processor as /proc/cpuinfo names it, and the threads halconv's CPU pipelines
// use, e.g. "Intel(R) Xeon(R) ... (16 threads)".
std::string host_cpu_description();

// Wall-clock times of `run` on the host: one warm-up call, then `reps` timed ones; median,
// min and max.
Timing time_on_host(int reps, const std::function<void()> &run);

// The memory floor of a pass that reads a width x height float32 image and writes a byte a
// pixel (what detect_edges moves): a threshold over the image, in strips of 32 rows on
// Halide's thread pool (the pool and the strips the CPU pipelines use), the loop vectorized
// by the compiler; the median of `reps` calls, in ms.
double host_floor_ms(const float *image, uint8_t *out, int width, int height, int reps);

}  // namespace halconv::bench
