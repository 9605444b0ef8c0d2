// The memory a plan owns: its kernel's device copy (made once) and its workspaces (one
// per stream it runs on at the same time), all stream-ordered so that neither making,
// applying nor dropping a CUDA plan waits for the device.
#pragma once

#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "halconv/types.h"

namespace halconv::internal {

class WorkspacePool {
public:
    // bytes: each workspace's size (0: applies need none, but still record their use so
    // the plan's device memory is freed after them). device: where they live; a CUDA
    // pool belongs to the current CUDA device.
    WorkspacePool(Device device, size_t bytes);
    ~WorkspacePool();
    WorkspacePool(const WorkspacePool &) = delete;
    WorkspacePool &operator=(const WorkspacePool &) = delete;

    // Device memory of the plan itself (its kernel's copy): `bytes` allocated on `stream`,
    // filled from `host` (copied before this returns, so `host` may go), ready for every
    // later apply on any stream; freed with the workspaces.
    void *upload(const void *host, size_t bytes, Stream stream);

    // A workspace for work queued on `stream` until the lease ends: one last used on the
    // same stream (stream order protects it), else one whose last use has finished, else a
    // new one. Ending the lease marks it used up to what `stream` has queued by then.
    class Lease {
    public:
        Lease(Lease &&other) noexcept;
        Lease &operator=(Lease &&) = delete;
        ~Lease();
        void *data() const;

    private:
        friend class WorkspacePool;
        Lease(WorkspacePool *pool, void *slot, Stream stream) : pool_(pool), slot_(slot), stream_(stream) {}
        WorkspacePool *pool_;
        void *slot_;
        Stream stream_;
    };
    Lease acquire(Stream stream);

    size_t bytes() const { return bytes_; }
    int cuda_device() const { return cuda_device_; }

private:
    struct Slot;
    void release(Slot *slot, Stream stream);

    Device device_;
    size_t bytes_;
    int cuda_device_ = -1;
    std::mutex mutex_;
    std::vector<std::unique_ptr<Slot>> slots_;
    std::vector<void *> uploads_;  // device copies made by upload()
    void *ready_ = nullptr;        // cudaEvent_t after the last upload
};

}  // namespace halconv::internal
