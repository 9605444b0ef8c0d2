// What every benchmark variant shares on the GPU: error checks, the timing protocol
// (seed 000 §5.1), the measured ceilings, the extra-memory probe and output read-back.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "HalideRuntime.h"
#include "halconv/types.h"

namespace halconv::bench {

// Element types of a precision's images and kernels, and of its outputs (halconv.h).
halide_type_t storage_type(Precision p);
halide_type_t output_type(Precision p);

// Throws halconv::Error naming `what` when e is not cudaSuccess.
void check_cuda(cudaError_t e, const char *what);

struct Timing {
    double median_ms = 0, min_ms = 0, max_ms = 0;
};

// Times `queue` (which queues device work on stream) with CUDA events: three warm-up
// runs, then `reps` timed ones, each behind a short spin kernel so the events time the
// device work and not the host's enqueueing; median, min and max.
Timing time_on_stream(cudaStream_t stream, int reps, const std::function<void()> &queue);

// Ceilings measured in the same run: device-to-device copy bandwidth (bytes read +
// written per second) and cuBLAS GEMM rates (8192^3; f16 inputs with f32 accumulation on
// tensor cores, and f32 SGEMM on CUDA cores), in operations per second.
struct Ceilings {
    double copy_bytes_per_s = 0;
    double gemm_f16_flops = 0;
    double gemm_f32_flops = 0;
};
Ceilings measure_ceilings(cudaStream_t stream, int reps);

// Extra device memory a variant takes: from begin() to end() the bytes that stayed
// allocated outside the default pool (cudaMemGetInfo, with Halide's device-allocation
// cache on so pipeline temporaries stay visible) plus the peak of stream-ordered
// allocations (cudaMallocAsync's pool high-water mark). A live pool allocation (a plan's
// workspace) counts once, in the peak. Granularity: the driver's allocation pages.
class MemoryProbe {
public:
    void begin();
    int64_t end();

private:
    size_t free_before_ = 0;
    uint64_t pool_reserved_before_ = 0;
};

// A variant's valid output on the device: `width` x `height` samples of `bits` (16, 32
// or 64) float, rows `pitch` samples apart.
struct OutputView {
    const void *data = nullptr;
    int width = 0, height = 0, pitch = 0, bits = 32;
};

// The whole output as float64 (for the accuracy report).
std::vector<double> fetch_output(const OutputView &view);
// Single samples (for spot checks of large outputs).
double fetch_sample(const OutputView &view, int x, int y);

}  // namespace halconv::bench
