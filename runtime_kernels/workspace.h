// Device scratch of the extern stages (CUTLASS's can_implement -> workspace -> run):
// a caller that plans ahead (halconv::Plan) asks each stage how many bytes it takes for
// a problem (halconv_*_workspace_bytes in halconv_tc.h), allocates that once, and
// installs it on the calling thread around the pipeline call (WorkspaceScope); the stage
// then carves its scratch from it in the order it asks (Scratch), allocating nothing.
// Without a workspace (a Halide pipeline of your own that calls the stages) a stage
// allocates its scratch stream-ordered (cudaMallocAsync) and frees it after its launches.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <initializer_list>

namespace halconv::rk {

struct Workspace {
    void *data = nullptr;
    size_t bytes = 0;
};

// While alive, extern stages on this thread take their scratch from `workspace`.
class WorkspaceScope {
public:
    explicit WorkspaceScope(Workspace workspace);
    ~WorkspaceScope();
    WorkspaceScope(const WorkspaceScope &) = delete;
    WorkspaceScope &operator=(const WorkspaceScope &) = delete;

private:
    Workspace previous_;
};

// Every slice is aligned to this (wider than any vector load of the kernels).
inline constexpr size_t scratch_alignment = 256;

inline constexpr size_t align_scratch(size_t bytes) {
    return (bytes + scratch_alignment - 1) / scratch_alignment * scratch_alignment;
}

// Bytes a stage asking for `sizes` in that order takes of a workspace: what its
// *_workspace_bytes function reports.
inline constexpr size_t scratch_bytes(std::initializer_list<size_t> sizes) {
    size_t total = 0;
    for (size_t s : sizes) {
        total += align_scratch(s);
    }
    return total;
}

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
