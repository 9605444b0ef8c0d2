// A deliberately slow CUDA runtime-API kernel for the context/stream interop test:
// it spins before writing, so a consumer that is not ordered after it on the same
// stream and context reads the old contents.
#include "cuda_spin_kernel.h"

#include <cuda_runtime.h>

namespace {

__global__ void spin_then_fill(float *out, int n, long long spin_cycles) {
    const long long start = clock64();
    while (clock64() - start < spin_cycles) {
    }
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = 1.0f + 0.5f * static_cast<float>(i % 97);
    }
}

}  // namespace

int launch_spin_then_fill(float *device_out, int n, long long spin_cycles, void *stream) {
    const int block = 256;
    spin_then_fill<<<(n + block - 1) / block, block, 0, static_cast<cudaStream_t>(stream)>>>(device_out, n,
                                                                                              spin_cycles);
    return static_cast<int>(cudaGetLastError());
}
