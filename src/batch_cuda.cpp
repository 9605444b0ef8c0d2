// Batches on CUDA (internal.h, BatchStreams): the images of a batch dealt round-robin over
// a few streams of the plan's device, forked from the caller's stream by an event and
// joined back by one event per stream, so that the kernels of small images run side by
// side instead of one after another. (Host threads enqueueing a stream each were measured
// slower, 2026-11-26 on an H100: bench/results/h100/batch/RUN.md.)
#include <cuda_runtime_api.h>

#include <algorithm>
#include <exception>
#include <mutex>
#include <vector>

#include "cuda_check.h"
#include "internal.h"

namespace halconv::internal {
namespace {

class CudaBatchStreams final : public BatchStreams {
public:
    explicit CudaBatchStreams(int count) {
        check_cuda(cudaEventCreateWithFlags(&fork_, cudaEventDisableTiming), "creating a batch event");
        for (int i = 0; i < count; i++) {
            cudaStream_t stream = nullptr;
            cudaEvent_t done = nullptr;
            check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "creating a batch stream");
            streams_.push_back(stream);
            check_cuda(cudaEventCreateWithFlags(&done, cudaEventDisableTiming), "creating a batch event");
            done_.push_back(done);
        }
    }
    CudaBatchStreams(const CudaBatchStreams &) = delete;
    CudaBatchStreams &operator=(const CudaBatchStreams &) = delete;
    ~CudaBatchStreams() override {
        // Destroying a stream or event with work pending is allowed: it is released when the work is done.
        for (cudaStream_t s : streams_) {
            cudaStreamDestroy(s);
        }
        for (cudaEvent_t e : done_) {
            cudaEventDestroy(e);
        }
        cudaEventDestroy(fork_);
    }

    void run(int n, Stream caller, const std::function<void(int, Stream)> &run_one) override {
        // One batch at a time enqueues on these streams (the events are reused); the device
        // work of several batches still overlaps.
        std::lock_guard<std::mutex> lock(mutex_);
        const auto caller_stream = reinterpret_cast<cudaStream_t>(caller);
        const int used = std::min<int>(n, int(streams_.size()));
        check_cuda(cudaEventRecord(fork_, caller_stream), "forking a batch from the caller's stream");
        for (int s = 0; s < used; s++) {
            check_cuda(cudaStreamWaitEvent(streams_[size_t(s)], fork_, 0), "forking a batch from the caller's stream");
        }
        std::exception_ptr error;
        try {
            for (int i = 0; i < n; i++) {
                run_one(i, reinterpret_cast<Stream>(streams_[size_t(i % used)]));
            }
        } catch (...) {
            error = std::current_exception();
        }
        // Joined back even after a failure: the caller's stream must not run ahead of what was queued.
        for (int s = 0; s < used; s++) {
            check_cuda(cudaEventRecord(done_[size_t(s)], streams_[size_t(s)]),
                       "joining a batch to the caller's stream");
            check_cuda(cudaStreamWaitEvent(caller_stream, done_[size_t(s)], 0),
                       "joining a batch to the caller's stream");
        }
        if (error) {
            std::rethrow_exception(error);
        }
    }

private:
    std::mutex mutex_;
    cudaEvent_t fork_ = nullptr;
    std::vector<cudaStream_t> streams_;
    std::vector<cudaEvent_t> done_;
};

}  // namespace

std::unique_ptr<BatchStreams> make_batch_streams(int count) {
    return std::make_unique<CudaBatchStreams>(count);
}

}  // namespace halconv::internal
