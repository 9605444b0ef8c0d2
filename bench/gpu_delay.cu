// A short spin kernel queued before each timed region: while the GPU is busy with it,
// the host enqueues the start event, the pipeline and the stop event, so the events
// time device work only and not the host's launch overhead (the method of nvbench's
// blocking kernel).
#include "gpu_delay.h"

#include <cuda_runtime.h>

namespace {

__global__ void spin(long long cycles) {
    const long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

}  // namespace

int queue_gpu_delay(long long cycles, void *stream) {
    spin<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(cycles);
    return static_cast<int>(cudaGetLastError());
}
