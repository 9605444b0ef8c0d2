// CUDA workspaces of plans: every allocation, reuse and free stream-ordered.
#include <cuda_runtime_api.h>

#include <array>
#include <mutex>
#include <string>
#include <vector>

#include "cuda_check.h"
#include "halconv/error.h"
#include "workspace_pool.h"

namespace halconv::internal {

namespace {

// A stream of halconv's own per device, for the frees of dropped plans: ordered after
// their last uses by events, never after the caller's later work, and alive when the
// caller's streams may not be.
cudaStream_t free_stream(int device) {
    static std::mutex mutex;
    static std::array<cudaStream_t, 64> streams{};
    std::lock_guard<std::mutex> lock(mutex);
    if (device < 0 || device >= int(streams.size())) {
        return nullptr;
    }
    if (streams[size_t(device)] == nullptr) {
        cudaStreamCreateWithFlags(&streams[size_t(device)], cudaStreamNonBlocking);
    }
    return streams[size_t(device)];
}

// Makes `device` current while alive.
class DeviceScope {
public:
    explicit DeviceScope(int device) {
        cudaGetDevice(&previous_);
        if (device != previous_) {
            cudaSetDevice(device);
        }
    }
    ~DeviceScope() { cudaSetDevice(previous_); }

private:
    int previous_ = 0;
};

class CudaWorkspacePool final : public WorkspacePool {
public:
    explicit CudaWorkspacePool(size_t bytes) : WorkspacePool(bytes) {
        check_cuda(cudaGetDevice(&device_), "finding the current CUDA device");
    }

    ~CudaWorkspacePool() override {
        // Nothing here may throw or wait: the frees are queued behind every use.
        DeviceScope scope(device_);
        cudaStream_t stream = free_stream(device_);
        for (const auto &slot : slots_) {
            if (slot->used) {
                cudaStreamWaitEvent(stream, slot->done, 0);
            }
        }
        if (ready_ != nullptr) {
            cudaStreamWaitEvent(stream, ready_, 0);
        }
        for (const auto &slot : slots_) {
            if (slot->data != nullptr) {
                cudaFreeAsync(slot->data, stream);
            }
            cudaEventDestroy(slot->done);
        }
        for (void *p : uploads_) {
            cudaFreeAsync(p, stream);
        }
        if (ready_ != nullptr) {
            cudaEventDestroy(ready_);
        }
        cudaGetLastError();
    }

    void *upload(const void *host, size_t bytes, Stream stream) override {
        return prepare(bytes, stream, [&](void *p) {
            check_cuda(cudaMemcpyAsync(p, host, bytes, cudaMemcpyHostToDevice, stream), "uploading the plan's kernel");
        });
    }

    void *prepare(size_t bytes, Stream stream, const std::function<void(void *)> &fill) override {
        std::lock_guard<std::mutex> lock(mutex_);
        void *p = nullptr;
        check_cuda(cudaMallocAsync(&p, bytes, stream),
                   "allocating the plan's own device memory (its kernel, its tables)");
        uploads_.push_back(p);
        fill(p);
        if (ready_ == nullptr) {
            check_cuda(cudaEventCreateWithFlags(&ready_, cudaEventDisableTiming), "creating an event");
        }
        check_cuda(cudaEventRecord(ready_, stream), "recording the upload");
        return p;
    }

    Lease acquire(Stream stream) override {
        std::lock_guard<std::mutex> lock(mutex_);
        int current = -1;
        cudaGetDevice(&current);
        if (current != device_) {
            throw Error(ErrorCode::invalid_argument, "this plan was made on CUDA device " + std::to_string(device_) +
                                                         " but device " + std::to_string(current) +
                                                         " is current; make it current, or make a plan there");
        }
        Slot *chosen = nullptr;
        for (const auto &slot : slots_) {
            if (!slot->busy && (!slot->used || slot->last_stream == stream)) {
                chosen = slot.get();
                break;
            }
        }
        for (size_t i = 0; chosen == nullptr && i < slots_.size(); i++) {
            if (!slots_[i]->busy && cudaEventQuery(slots_[i]->done) == cudaSuccess) {
                chosen = slots_[i].get();
            }
        }
        cudaGetLastError();  // cudaEventQuery's cudaErrorNotReady is an answer, not an error
        if (chosen == nullptr) {
            auto slot = std::make_unique<Slot>();
            check_cuda(cudaEventCreateWithFlags(&slot->done, cudaEventDisableTiming), "creating an event");
            if (bytes() > 0) {
                const cudaError_t e = cudaMallocAsync(&slot->data, bytes(), stream);
                if (e != cudaSuccess) {
                    cudaEventDestroy(slot->done);
                    check_cuda(e, ("allocating a " + std::to_string(bytes()) + "-byte plan workspace").c_str());
                }
            }
            // The kernel's upload happened on the plan's first stream.
            if (ready_ != nullptr) {
                check_cuda(cudaStreamWaitEvent(stream, ready_, 0), "ordering the apply after the plan's upload");
            }
            chosen = slot.get();
            slots_.push_back(std::move(slot));
        }
        chosen->busy = true;
        return lease(chosen, chosen->data, stream);
    }

private:
    struct Slot {
        void *data = nullptr;
        cudaEvent_t done = nullptr;  // recorded after the last use
        Stream last_stream = nullptr;
        bool used = false;
        bool busy = false;
    };

    void release(void *slot_ptr, Stream stream) override {
        std::lock_guard<std::mutex> lock(mutex_);
        Slot *slot = static_cast<Slot *>(slot_ptr);
        // A failed record leaves the event at its last completed use: the slot then
        // looks free too early only if the context is already broken.
        slot->used = cudaEventRecord(slot->done, stream) == cudaSuccess || slot->used;
        cudaGetLastError();
        slot->last_stream = stream;
        slot->busy = false;
    }

    int device_ = -1;
    std::mutex mutex_;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::vector<void *> uploads_;  // device copies made by upload()
    cudaEvent_t ready_ = nullptr;  // after the last upload
};

}  // namespace

std::unique_ptr<WorkspacePool> make_cuda_workspace_pool(size_t bytes) {
    return std::make_unique<CudaWorkspacePool>(bytes);
}

}  // namespace halconv::internal
