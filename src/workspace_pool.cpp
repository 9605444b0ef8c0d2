#include "workspace_pool.h"

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "halconv/error.h"

namespace halconv::internal {

WorkspacePool::Lease::Lease(Lease &&other) noexcept
    : pool_(other.pool_), slot_(other.slot_), data_(other.data_), stream_(other.stream_) {
    other.pool_ = nullptr;
}

WorkspacePool::Lease::~Lease() {
    if (pool_ != nullptr) {
        pool_->release(slot_, stream_);
    }
}

namespace {

class HostWorkspacePool final : public WorkspacePool {
public:
    explicit HostWorkspacePool(size_t bytes) : WorkspacePool(bytes) {}
    ~HostWorkspacePool() override {
        for (const Slot &slot : slots_) {
            std::free(slot.data);
        }
    }

    void *upload(const void *, size_t, Stream) override {
        throw Error(ErrorCode::internal, "a CPU plan keeps its kernel on the host: nothing to upload");
    }

    void *prepare(size_t, Stream, const std::function<void(void *)> &) override {
        throw Error(ErrorCode::internal, "a CPU plan prepares nothing on a device");
    }

    Lease acquire(Stream stream) override {
        std::lock_guard<std::mutex> lock(mutex_);
        for (size_t i = 0; i < slots_.size(); i++) {
            if (!slots_[i].busy) {
                slots_[i].busy = true;
                return lease(reinterpret_cast<void *>(i), slots_[i].data, stream);
            }
        }
        Slot slot;
        if (bytes() > 0) {
            slot.data = std::malloc(bytes());
            if (slot.data == nullptr) {
                throw Error(ErrorCode::out_of_memory,
                            "could not allocate a " + std::to_string(bytes()) + "-byte plan workspace");
            }
        }
        slot.busy = true;
        slots_.push_back(slot);
        return lease(reinterpret_cast<void *>(slots_.size() - 1), slot.data, stream);
    }

private:
    struct Slot {
        void *data = nullptr;
        bool busy = false;
    };

    void release(void *slot, Stream) override {
        std::lock_guard<std::mutex> lock(mutex_);
        slots_[reinterpret_cast<size_t>(slot)].busy = false;
    }

    std::mutex mutex_;
    std::vector<Slot> slots_;  // a lease names its slot by index: the vector may grow
};

}  // namespace

std::unique_ptr<WorkspacePool> make_host_workspace_pool(size_t bytes) {
    return std::make_unique<HostWorkspacePool>(bytes);
}

}  // namespace halconv::internal
