// The memory a plan owns: its kernel's device copy (made once) and its workspaces (one
// per stream it runs on at the same time). On CUDA all of it is stream-ordered, so that
// neither making, applying nor dropping a plan waits for the device.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>

#include "halconv/types.h"

namespace halconv::internal {

class WorkspacePool {
public:
    virtual ~WorkspacePool() = default;
    WorkspacePool(const WorkspacePool &) = delete;
    WorkspacePool &operator=(const WorkspacePool &) = delete;

    // Device memory of the plan itself (its kernel's copy): `bytes` allocated on `stream`,
    // filled from `host` (copied before this returns, so `host` may go), ready for every
    // later apply on any stream; freed with the workspaces. CUDA pools only.
    virtual void *upload(const void *host, size_t bytes, Stream stream) = 0;
    // Device memory of the plan itself as above, filled by the work `fill(memory)` queues
    // on `stream` (what the plan prepares from its kernel's copy), ready for every later
    // apply on any stream. CUDA pools only.
    virtual void *prepare(size_t bytes, Stream stream, const std::function<void(void *)> &fill) = 0;

    // A workspace for work queued on `stream` until the lease ends. Ending the lease marks
    // it used up to what `stream` has queued by then.
    class Lease {
    public:
        Lease(Lease &&other) noexcept;
        Lease &operator=(Lease &&) = delete;
        ~Lease();
        void *data() const { return data_; }

    private:
        friend class WorkspacePool;
        Lease(WorkspacePool *pool, void *slot, void *data, Stream stream)
            : pool_(pool), slot_(slot), data_(data), stream_(stream) {}
        WorkspacePool *pool_;
        void *slot_;
        void *data_;
        Stream stream_;
    };
    virtual Lease acquire(Stream stream) = 0;

    // Each workspace's size (0: applies need none, but still record their use so that a
    // CUDA plan's device memory is freed after them).
    size_t bytes() const { return bytes_; }

protected:
    explicit WorkspacePool(size_t bytes) : bytes_(bytes) {}
    Lease lease(void *slot, void *data, Stream stream) { return Lease(this, slot, data, stream); }
    virtual void release(void *slot, Stream stream) = 0;

private:
    size_t bytes_;
};

// Host workspaces (std::malloc), reused by whichever apply finds one free.
std::unique_ptr<WorkspacePool> make_host_workspace_pool(size_t bytes);
// Workspaces of the current CUDA device (workspace_pool_cuda.cpp): one last used on the
// same stream (stream order protects it), else one whose last use has finished, else a
// new one. Throws Error(unsupported) in a build without CUDA.
std::unique_ptr<WorkspacePool> make_cuda_workspace_pool(size_t bytes);

}  // namespace halconv::internal
