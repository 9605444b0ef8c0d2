#include "common/workspace.h"

#include <atomic>

namespace halconv::rk {

namespace {

std::atomic<uint64_t> allocations{0};

}  // namespace

Scratch::Scratch(cudaStream_t stream) : stream_(stream), workspace_(current_workspace()) {}

Scratch::~Scratch() {
    release();
}

cudaError_t Scratch::take(size_t bytes, void **ptr) {
    *ptr = nullptr;
    if (bytes == 0) {
        return cudaSuccess;
    }
    const size_t aligned = align_scratch(bytes);
    if (workspace_.data != nullptr && used_ + aligned <= workspace_.bytes) {
        *ptr = static_cast<char *>(workspace_.data) + used_;
        used_ += aligned;
        return cudaSuccess;
    }
    if (owned_count_ == max_owned) {
        return cudaErrorInvalidValue;  // more slices than any stage asks for
    }
    allocations.fetch_add(1, std::memory_order_relaxed);
    const cudaError_t e = cudaMallocAsync(ptr, aligned, stream_);
    if (e == cudaSuccess) {
        owned_[owned_count_++] = *ptr;
    }
    return e;
}

cudaError_t Scratch::release() {
    cudaError_t first = cudaSuccess;
    for (int i = 0; i < owned_count_; i++) {
        const cudaError_t e = cudaFreeAsync(owned_[i], stream_);
        first = first == cudaSuccess ? e : first;
    }
    owned_count_ = 0;
    return first;
}

uint64_t scratch_allocations() {
    return allocations.load(std::memory_order_relaxed);
}

}  // namespace halconv::rk
