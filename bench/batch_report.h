// The batch report of halconv_bench: N small device-resident images of one extent in one
// call (a batch, x, y, n) against the same images applied one by one and against one image
// of as many pixels, and against the memory floor (issue 23's targets: 64 x 1024^2 at
// >= 80 % of one 8192^2 image's per-pixel rate in f16f32 K = 31, and >= 80 % of the
// memory floor's rate in f32 K = 3).
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "bench_core.h"
#include "halconv/types.h"

namespace halconv::bench {

extern const std::vector<std::string> batch_columns;

// For each size, kernel and precision: a batch of `count` images through one plan call, the
// same images through `count` applies on the caller's stream ("loop"), and one square image
// of count x the pixels ("single"); Auto's algorithm, mode same, boundary constant. Wall
// clock: median of `reps` calls, each followed by a synchronize of `stream`, after one
// warm-up. The batch's first and last outputs are checked bit for bit against the loop's.
void batch_report(const std::vector<Size> &sizes, const std::vector<int> &kernels,
                  const std::vector<Precision> &precisions, int count, int reps, double copy_bytes_per_s,
                  cudaStream_t stream, Table &table, const std::function<void()> &checkpoint);

}  // namespace halconv::bench
