#include "workspace_pool.h"

#include <cuda_runtime_api.h>

#include <array>
#include <cstdlib>
#include <string>

#include "halconv/error.h"

namespace halconv::internal {

namespace {

void check_cuda(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        cudaGetLastError();  // clear it: the failure is reported, not left for the next call
        throw Error(e == cudaErrorMemoryAllocation ? ErrorCode::out_of_memory : ErrorCode::device,
                    std::string(what) + ": " + cudaGetErrorString(e));
    }
}

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

}  // namespace

struct WorkspacePool::Slot {
    void *data = nullptr;
    cudaEvent_t done = nullptr;  // recorded after the last use (CUDA)
    Stream last_stream = nullptr;
    bool used = false;
    bool busy = false;
};

WorkspacePool::WorkspacePool(Device device, size_t bytes) : device_(device), bytes_(bytes) {
    if (device_ == Device::cuda) {
        check_cuda(cudaGetDevice(&cuda_device_), "finding the current CUDA device");
    }
}

WorkspacePool::~WorkspacePool() {
    if (device_ != Device::cuda) {
        for (const auto &slot : slots_) {
            std::free(slot->data);
        }
        return;
    }
    // Nothing here may throw or wait: the frees are queued behind every use.
    DeviceScope scope(cuda_device_);
    cudaStream_t stream = free_stream(cuda_device_);
    for (const auto &slot : slots_) {
        if (slot->used) {
            cudaStreamWaitEvent(stream, slot->done, 0);
        }
    }
    if (ready_ != nullptr) {
        cudaStreamWaitEvent(stream, static_cast<cudaEvent_t>(ready_), 0);
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
        cudaEventDestroy(static_cast<cudaEvent_t>(ready_));
    }
    cudaGetLastError();
}

void *WorkspacePool::upload(const void *host, size_t bytes, Stream stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    void *p = nullptr;
    check_cuda(cudaMallocAsync(&p, bytes, stream), "allocating the plan's kernel on the device");
    uploads_.push_back(p);
    check_cuda(cudaMemcpyAsync(p, host, bytes, cudaMemcpyHostToDevice, stream), "uploading the plan's kernel");
    if (ready_ == nullptr) {
        cudaEvent_t e = nullptr;
        check_cuda(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "creating an event");
        ready_ = e;
    }
    check_cuda(cudaEventRecord(static_cast<cudaEvent_t>(ready_), stream), "recording the upload");
    return p;
}

WorkspacePool::Lease WorkspacePool::acquire(Stream stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    const bool cuda = device_ == Device::cuda;
    if (cuda) {
        int current = -1;
        cudaGetDevice(&current);
        if (current != cuda_device_) {
            throw Error(ErrorCode::invalid_argument,
                        "this plan was made on CUDA device " + std::to_string(cuda_device_) + " but device " +
                            std::to_string(current) + " is current; make it current, or make a plan there");
        }
    }
    Slot *chosen = nullptr;
    for (const auto &slot : slots_) {
        if (!slot->busy && (!cuda || !slot->used || slot->last_stream == stream)) {
            chosen = slot.get();
            break;
        }
    }
    for (size_t i = 0; chosen == nullptr && cuda && i < slots_.size(); i++) {
        if (!slots_[i]->busy && cudaEventQuery(slots_[i]->done) == cudaSuccess) {
            chosen = slots_[i].get();
        }
    }
    cudaGetLastError();  // cudaEventQuery's cudaErrorNotReady is an answer, not an error
    if (chosen == nullptr) {
        auto slot = std::make_unique<Slot>();
        if (cuda) {
            check_cuda(cudaEventCreateWithFlags(&slot->done, cudaEventDisableTiming), "creating an event");
            if (bytes_ > 0) {
                const cudaError_t e = cudaMallocAsync(&slot->data, bytes_, stream);
                if (e != cudaSuccess) {
                    cudaEventDestroy(slot->done);
                    check_cuda(e, ("allocating a " + std::to_string(bytes_) + "-byte plan workspace").c_str());
                }
            }
            // The kernel's upload happened on the plan's first stream.
            if (ready_ != nullptr) {
                check_cuda(cudaStreamWaitEvent(stream, static_cast<cudaEvent_t>(ready_), 0),
                           "ordering the apply after the plan's upload");
            }
        } else if (bytes_ > 0) {
            slot->data = std::malloc(bytes_);
            if (slot->data == nullptr) {
                throw Error(ErrorCode::out_of_memory,
                            "could not allocate a " + std::to_string(bytes_) + "-byte plan workspace");
            }
        }
        chosen = slot.get();
        slots_.push_back(std::move(slot));
    }
    chosen->busy = true;
    return Lease(this, chosen, stream);
}

void WorkspacePool::release(Slot *slot, Stream stream) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (device_ == Device::cuda) {
        // A failed record leaves the event at its last completed use: the slot then
        // looks free too early only if the context is already broken.
        slot->used = cudaEventRecord(slot->done, stream) == cudaSuccess || slot->used;
        cudaGetLastError();
    }
    slot->last_stream = stream;
    slot->busy = false;
}

WorkspacePool::Lease::Lease(Lease &&other) noexcept : pool_(other.pool_), slot_(other.slot_), stream_(other.stream_) {
    other.pool_ = nullptr;
}

WorkspacePool::Lease::~Lease() {
    if (pool_ != nullptr) {
        pool_->release(static_cast<Slot *>(slot_), stream_);
    }
}

void *WorkspacePool::Lease::data() const {
    return static_cast<Slot *>(slot_)->data;
}

}  // namespace halconv::internal
