// The scratch of the extern stages, carved from the workspace a caller installed
// (workspace_scope.h). Without a workspace (a Halide pipeline of your own that calls the
// stages) a stage allocates its scratch stream-ordered (cudaMallocAsync) and frees it
// after its launches.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

#include "common/workspace_scope.h"

namespace halconv::rk {

// The scratch of one extern-stage call: slices of the thread's workspace while it has
// room, else its own stream-ordered allocations, freed (stream-ordered) by release() or
// the destructor.
class Scratch {
public:
    explicit Scratch(cudaStream_t stream);
    ~Scratch();
    Scratch(const Scratch &) = delete;
    Scratch &operator=(const Scratch &) = delete;

    // `bytes` of device memory at *ptr (aligned to scratch_alignment); nullptr for 0 bytes.
    cudaError_t take(size_t bytes, void **ptr);
    template <typename T>
    cudaError_t take(size_t bytes, T **ptr) {
        void *p = nullptr;
        const cudaError_t e = take(bytes, &p);
        *ptr = static_cast<T *>(p);
        return e;
    }
    // Frees what this call allocated itself; the first error, or cudaSuccess.
    cudaError_t release();

private:
    static constexpr int max_owned = 4;
    cudaStream_t stream_;
    Workspace workspace_;
    size_t used_ = 0;
    void *owned_[max_owned] = {};
    int owned_count_ = 0;
};

// How many scratch slices the thread's workspace could not hold, process-wide (each one
// an allocation on the hot path): a plan's sizing is wrong if this grows during its applies.
uint64_t scratch_allocations();

}  // namespace halconv::rk
