// The multi-channel report of halconv_bench: halconv's implicit GEMM (tensor cores), im2col
// (tensor cores / cuBLAS) and direct pipelines against cuDNN (NHWC and NCHW, f16 and f32, cudnnFind's best), valid
// cross-correlation of one C-channel image by N kernels of K x K.
#pragma once

#include <cuda_runtime.h>

#include <functional>
#include <string>
#include <vector>

#include "bench_core.h"

namespace halconv::bench {

struct MultichannelCase {
    int width, height, channels, filters, k;
};

// The two cases: 1024^2 x C 64, N 64, K 3 and 4096^2 x C 3, N 16, K 7.
std::vector<MultichannelCase> default_multichannel_cases();

extern const std::vector<std::string> multichannel_columns;

// Times every variant on every case (median of `reps` after warm-up, inputs resident),
// spot-checks 64 outputs of each against a float64 sum, and adds one row per variant;
// checkpoint() after each case. cudnn: a cudnnHandle_t on `stream` (null: cuDNN rows
// marked unsupported with cudnn_status).
void multichannel_report(const std::vector<MultichannelCase> &cases, int reps, cudaStream_t stream, void *cudnn,
                         const std::string &cudnn_status, const std::string &device, Table &table,
                         const std::function<void()> &checkpoint);

}  // namespace halconv::bench
