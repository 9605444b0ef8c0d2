// Row bands on CUDA devices (bands.h): each device runs several lanes, a lane a thread
// with its own stream, device slab and output rows, and pinned staging where the user's
// buffers are pageable. A lane takes the next band, copies its slab in (straight from
// pinned or device memory, else staged), fills the pads on the device, runs the band's
// plan and copies the rows out; the lanes' copies and pipelines overlap one another.
// Buffers in the plan's device's memory are read and written from every lane's device
// (peer copies).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <mutex>
#include <set>
#include <thread>

#include "bands.h"
#include "cuda_check.h"

namespace halconv::internal {

size_t cuda_free_bytes() {
    size_t free = 0, total = 0;
    check_cuda(cudaMemGetInfo(&free, &total), "querying the device's free memory");
    return free;
}

namespace {

// Makes `device` current until the end of the scope.
class DeviceScope {
public:
    explicit DeviceScope(int device) {
        check_cuda(cudaGetDevice(&previous_), "querying the current device");
        check_cuda(cudaSetDevice(device), "selecting a band's device");
    }
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;
    ~DeviceScope() { cudaSetDevice(previous_); }

private:
    int previous_ = 0;
};

// One lane's memory and stream, kept by the plan between calls.
struct Lane {
    int device = 0;
    cudaStream_t stream = nullptr;
    void *device_slab = nullptr, *device_rows = nullptr;
    uint8_t *device_flags = nullptr;
    void *staged_slab = nullptr, *staged_rows = nullptr;  // pinned
    uint8_t *host_flags = nullptr;                        // pinned
    size_t slab_bytes = 0, rows_bytes = 0, flag_bytes = 0;

    Lane(int dev, size_t slab, size_t rows, size_t flags)
        : device(dev), slab_bytes(slab), rows_bytes(rows), flag_bytes(flags) {
        const DeviceScope scope(device);
        check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "creating a band stream");
        check_cuda(cudaMalloc(&device_slab, slab), "allocating a band's slab on the device");
        check_cuda(cudaMalloc(&device_rows, rows), "allocating a band's output rows on the device");
        check_cuda(cudaMalloc(reinterpret_cast<void **>(&device_flags), flags), "allocating a band's row flags");
        check_cuda(cudaMallocHost(reinterpret_cast<void **>(&host_flags), flags), "allocating pinned row flags");
    }
    Lane(const Lane &) = delete;
    Lane &operator=(const Lane &) = delete;
    ~Lane() {
        int previous = 0;
        cudaGetDevice(&previous);
        cudaSetDevice(device);
        cudaStreamSynchronize(stream);
        cudaFree(device_slab);
        cudaFree(device_rows);
        cudaFree(device_flags);
        cudaFreeHost(staged_slab);
        cudaFreeHost(staged_rows);
        cudaFreeHost(host_flags);
        cudaStreamDestroy(stream);
        cudaSetDevice(previous);
    }
    void *staging(void *&slot, size_t bytes) {
        if (slot == nullptr) {
            check_cuda(cudaMallocHost(&slot, bytes), "allocating pinned staging for a band");
        }
        return slot;
    }
};

// Where a banded call's buffer lives: device memory of the plan's device (read and
// written by copies from any device: peer copies), page-locked host memory
// (cudaHostRegister, cudaMallocHost: copied directly) or pageable host memory (staged).
enum class Memory { device, pinned, pageable };

// Whether the whole of a host buffer is page-locked.
bool pinned(const halide_buffer_t *b) {
    const auto is_host = [](const void *p) {
        cudaPointerAttributes a{};
        if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
            cudaGetLastError();
            return false;
        }
        return a.type == cudaMemoryTypeHost;
    };
    const size_t last = (size_t(b->dim[1].extent - 1) * b->dim[1].stride + b->dim[0].extent - 1) * b->type.bytes();
    return is_host(b->host) && is_host(b->host + last);
}

Memory memory_of(const halide_buffer_t *b) {
    return b->device != 0 ? Memory::device : pinned(b) ? Memory::pinned : Memory::pageable;
}

// The first byte of a buffer where copies read or write it.
uint8_t *base_of(const halide_buffer_t *b, Memory m) {
    return m == Memory::device ? reinterpret_cast<uint8_t *>(b->device) : b->host;
}

// A 2D view of device rows `pitch` elements apart (0: dense).
struct DeviceView {
    halide_dimension_t dims[2];
    halide_buffer_t buffer{};
    DeviceView(halide_type_t type, void *data, Extent2d extent, int64_t pitch = 0) {
        dims[0] = {0, extent.width, 1, 0};
        dims[1] = {0, extent.height, int32_t(pitch > 0 ? pitch : extent.width), 0};
        buffer.device = reinterpret_cast<uintptr_t>(data);
        buffer.device_interface = cuda_device_interface();
        buffer.type = type;
        buffer.dimensions = 2;
        buffer.dim = dims;
    }
};

// Lets the current device read and write `peer`'s memory directly (NVLink or PCIe) where
// the two can; elsewhere cudaMemcpyDefault copies go through the host, slower but right.
// Asked once per pair and process (the driver answers an error to a second request).
void enable_peer_access(int peer) {
    static std::mutex mutex;
    static std::set<std::pair<int, int>> asked;
    int device = 0, can = 0;
    check_cuda(cudaGetDevice(&device), "querying the current device");
    std::lock_guard<std::mutex> lock(mutex);
    if (!asked.insert({device, peer}).second) {
        return;
    }
    if (cudaDeviceCanAccessPeer(&can, device, peer) != cudaSuccess || !can) {
        cudaGetLastError();
        return;
    }
    const cudaError_t e = cudaDeviceEnablePeerAccess(peer, 0);
    if (e == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();
        return;
    }
    check_cuda(e, "enabling peer access between the band's device and the image's");
}

std::vector<int> band_devices(const BandOptions &o) {
    int count = 0;
    check_cuda(cudaGetDeviceCount(&count), "counting CUDA devices");
    if (o.devices.empty()) {
        std::vector<int> all;
        for (int d = 0; d < count; d++) {
            all.push_back(d);
        }
        return all;
    }
    for (size_t i = 0; i < o.devices.size(); i++) {
        const int d = o.devices[i];
        if (d < 0 || d >= count) {
            throw Error(ErrorCode::invalid_argument, "bands.devices names CUDA device " + std::to_string(d) +
                                                         "; this machine has devices 0 to " +
                                                         std::to_string(count - 1));
        }
        if (std::find(o.devices.begin(), o.devices.begin() + long(i), d) != o.devices.begin() + long(i)) {
            throw Error(ErrorCode::invalid_argument, "bands.devices names CUDA device " + std::to_string(d) + " twice");
        }
    }
    return o.devices;
}

// One band through one lane, returning when its rows are in the output. The slab's first
// `kept` rows are the last of the lane's previous band's slab (BandLayout::kept_rows).
void run_band(const BandCall &call, Lane &lane, const Plan &plan, int band, int kept, Memory image_memory,
              Memory output_memory) {
    const BandLayout &l = call.layout;
    const int rows = l.rows_of(band);
    const Extent2d s = l.slab(rows);
    const size_t e = l.storage_bytes, slab_pitch = size_t(l.slab_pitch()) * e;
    const size_t image_pitch = size_t(call.image->dim[1].stride) * e;
    auto *slab = static_cast<uint8_t *>(lane.device_slab);
    if (kept > 0) {
        check_cuda(cudaMemcpyAsync(slab, slab + size_t(l.band_rows) * slab_pitch, size_t(kept) * slab_pitch,
                                   cudaMemcpyDeviceToDevice, lane.stream),
                   "moving a band's halo rows within its slab");
    }
    if (image_memory != Memory::pageable) {
        // Runs of slab rows that read consecutive image rows: one 2D copy each.
        for (int r = 0; r < s.height;) {
            const int64_t y = l.source_row(band, r, call.boundary);
            int n = 1;
            lane.host_flags[r] = y < 0;
            while (r + n < s.height && y >= 0 && l.source_row(band, r + n, call.boundary) == y + n) {
                lane.host_flags[r + n] = 0;
                n++;
            }
            const int skip = std::clamp(kept - r, 0, n);  // rows already in the slab
            if (y >= 0 && skip < n) {
                check_cuda(
                    cudaMemcpy2DAsync(slab + size_t(r + skip) * slab_pitch + size_t(l.offset_x) * e, slab_pitch,
                                      base_of(call.image, image_memory) + size_t(y + skip) * image_pitch, image_pitch,
                                      size_t(l.image.width) * e, size_t(n - skip), cudaMemcpyDefault, lane.stream),
                    "copying a band's rows to the device");
            }
            r += n;
        }
    } else {
        auto *staged = static_cast<uint8_t *>(lane.staging(lane.staged_slab, lane.slab_bytes));
        copy_slab_rows(call, band, staged, lane.host_flags, kept);
        check_cuda(cudaMemcpyAsync(slab + size_t(kept) * slab_pitch, staged + size_t(kept) * slab_pitch,
                                   slab_pitch * size_t(s.height - kept), cudaMemcpyHostToDevice, lane.stream),
                   "copying a band's slab to the device");
    }
    const bool any_fill = std::any_of(lane.host_flags, lane.host_flags + s.height, [](uint8_t f) { return f != 0; });
    check_cuda(
        cudaMemcpyAsync(lane.device_flags, lane.host_flags, size_t(s.height), cudaMemcpyHostToDevice, lane.stream),
        "copying a band's row flags");
    check_cuda(
        cudaError_t(rk::band_fill_pads_cuda(pads_of(call, band, slab, lane.device_flags, any_fill), lane.stream)),
        "filling a band's pads");
    DeviceView in(call.image->type, slab, s, l.slab_pitch());
    DeviceView out(call.output->type, lane.device_rows, {l.output.width, rows});
    plan.run(&in.buffer, &out.buffer, reinterpret_cast<Stream>(lane.stream));
    const size_t row_bytes = size_t(l.output.width) * l.output_bytes;
    const size_t out_pitch = size_t(call.output->dim[1].stride) * l.output_bytes;
    uint8_t *first = base_of(call.output, output_memory) + size_t(l.first_row(band)) * out_pitch;
    if (output_memory != Memory::pageable) {
        check_cuda(cudaMemcpy2DAsync(first, out_pitch, lane.device_rows, row_bytes, row_bytes, size_t(rows),
                                     cudaMemcpyDefault, lane.stream),
                   "copying a band's rows to the host");
        check_cuda(cudaStreamSynchronize(lane.stream), "a band's stream");
        return;
    }
    auto *staged = static_cast<uint8_t *>(lane.staging(lane.staged_rows, lane.rows_bytes));
    check_cuda(cudaMemcpyAsync(staged, lane.device_rows, row_bytes * size_t(rows), cudaMemcpyDeviceToHost, lane.stream),
               "copying a band's rows to the host");
    check_cuda(cudaStreamSynchronize(lane.stream), "a band's stream");
    for (int r = 0; r < rows; r++) {
        std::memcpy(first + size_t(r) * out_pitch, staged + size_t(r) * row_bytes, row_bytes);
    }
}

}  // namespace

struct BandResources {
    std::mutex mutex;  // one banded call at a time per plan
    std::vector<std::unique_ptr<Lane>> lanes;
};

std::shared_ptr<BandResources> make_band_resources() {
    return std::make_shared<BandResources>();
}

void run_bands_cuda(const BandCall &call, BandResources &resources) {
    const BandLayout &l = call.layout;
    const std::vector<int> devices = band_devices(call.bands);
    const int per_device = call.bands.streams_per_device > 0 ? call.bands.streams_per_device : band_default_streams;
    synchronize_stream(call.stream);
    int home = 0;
    check_cuda(cudaGetDevice(&home), "querying the current device");
    const Memory image_memory = memory_of(call.image), output_memory = memory_of(call.output);
    const bool on_device = image_memory == Memory::device || output_memory == Memory::device;

    std::lock_guard<std::mutex> lock(resources.mutex);
    const Extent2d biggest = l.slab(l.band_rows);
    const size_t slab_bytes = size_t(l.slab_pitch()) * biggest.height * l.storage_bytes;
    const size_t rows_bytes = size_t(l.output.width) * l.band_rows * l.output_bytes;
    // Lanes of another layout or device list are of no use to this call.
    std::vector<std::pair<int, int>> wanted;  // (device, lane index on it)
    for (int d : devices) {
        for (int i = 0; i < std::min(per_device, l.bands); i++) {
            wanted.push_back({d, i});
        }
    }
    const bool reusable = resources.lanes.size() == wanted.size() &&
                          std::equal(wanted.begin(), wanted.end(), resources.lanes.begin(),
                                     [&](const std::pair<int, int> &w, const std::unique_ptr<Lane> &lane) {
                                         return lane->device == w.first && lane->slab_bytes == slab_bytes &&
                                                lane->rows_bytes == rows_bytes;
                                     });
    if (!reusable) {
        resources.lanes.clear();
        for (const auto &w : wanted) {
            resources.lanes.push_back(std::make_unique<Lane>(w.first, slab_bytes, rows_bytes, size_t(biggest.height)));
        }
    }

    BandQueue queue(l.bands, int(resources.lanes.size()));
    std::atomic<bool> failed{false};
    std::mutex error_mutex;
    std::exception_ptr error;
    std::vector<std::thread> threads;
    const auto join_all = [&] {
        for (std::thread &t : threads) {
            t.join();
        }
    };
    for (size_t index = 0; index < resources.lanes.size(); index++) {
        const auto work = [&, lane = resources.lanes[index].get(), index = int(index)] {
            try {
                check_cuda(cudaSetDevice(lane->device), "selecting a band's device");
                if (on_device && lane->device != home) {
                    enable_peer_access(home);
                }
                const Plan full = call.plan_for(l.band_rows);
                const int last_rows = l.rows_of(l.bands - 1);
                const Plan last = last_rows == l.band_rows ? full : call.plan_for(last_rows);
                int previous = -1;
                for (int b = queue.next(index); b >= 0 && !failed; previous = b, b = queue.next(index)) {
                    run_band(call, *lane, l.rows_of(b) == l.band_rows ? full : last, b, l.kept_rows(previous, b),
                             image_memory, output_memory);
                }
            } catch (...) {
                std::lock_guard<std::mutex> g(error_mutex);
                if (!error) {
                    error = std::current_exception();
                }
                failed = true;
            }
        };
        try {
            threads.emplace_back(work);
        } catch (...) {  // no thread to be had: stop the lanes that started, then report it
            failed = true;
            join_all();
            throw Error(ErrorCode::out_of_memory, "starting a thread for a band lane failed");
        }
    }
    join_all();
    if (error) {
        std::rethrow_exception(error);
    }
}

}  // namespace halconv::internal
