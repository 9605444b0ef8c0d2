// The bands report (bands_report.h).
#include "bands_report.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <thread>

#include "gpu_common.h"
#include "halconv/halconv.h"

namespace halconv::bench {

const std::vector<std::string> bands_columns = {
    "device",  "gpus",       "memory",        "precision",     "width",
    "height",  "K",          "algorithm",     "status",        "median_ms",
    "min_ms",  "max_ms",     "gb_s",          "copy_floor_ms", "fraction_of_copy_floor",
    "scaling", "device_mib", "check_max_err", "note"};

namespace {

// A host float image, pinned (cudaMallocHost) or pageable.
class HostImage {
public:
    HostImage(size_t n, bool pinned) : n_(n), pinned_(pinned) {
        if (pinned) {
            check_cuda(cudaMallocHost(reinterpret_cast<void **>(&data_), n * sizeof(float)), "pinned host image");
        } else {
            data_ = static_cast<float *>(std::aligned_alloc(4096, (n * sizeof(float) + 4095) / 4096 * 4096));
            if (data_ == nullptr) {
                throw Error(ErrorCode::out_of_memory, "pageable host image");
            }
        }
    }
    HostImage(const HostImage &) = delete;
    HostImage &operator=(const HostImage &) = delete;
    ~HostImage() {
        if (pinned_) {
            cudaFreeHost(data_);
        } else {
            std::free(data_);
        }
    }
    float *data() const { return data_; }
    size_t bytes() const { return n_ * sizeof(float); }
    bool pinned() const { return pinned_; }

private:
    float *data_ = nullptr;
    size_t n_ = 0;
    bool pinned_ = false;
};

// Values in [-1, 1) from a hash of the index, written by every core (GiBs of them).
void fill(float *p, size_t n) {
    const unsigned threads = std::max(1u, std::thread::hardware_concurrency());
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; t++) {
        pool.emplace_back([=] {
            for (size_t i = n * t / threads; i < n * (t + 1) / threads; i++) {
                uint64_t h = (i + 1) * 0x9E3779B97F4A7C15ull;
                h ^= h >> 29;
                h *= 0xBF58476D1CE4E5B9ull;
                h ^= h >> 32;
                p[i] = float(int64_t(h % 2000001) - 1000000) * 1e-6f;
            }
        });
    }
    for (std::thread &t : pool) {
        t.join();
    }
}

template <typename F>
std::vector<double> wall_ms(int reps, F f) {
    std::vector<double> ms;
    for (int r = 0; r < reps; r++) {
        const auto t0 = std::chrono::steady_clock::now();
        f();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms;
}

// The image copied to device 0 while the output comes back from it, on two streams
// (pinned) or two threads (pageable: the driver stages those copies itself).
double copy_floor_ms(const HostImage &in, const HostImage &out, int reps) {
    check_cuda(cudaSetDevice(0), "device 0");
    void *d_in = nullptr, *d_out = nullptr;
    check_cuda(cudaMalloc(&d_in, in.bytes()), "device image for the copy floor");
    check_cuda(cudaMalloc(&d_out, out.bytes()), "device output for the copy floor");
    cudaStream_t s[2];
    for (cudaStream_t &st : s) {
        check_cuda(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
    }
    const std::vector<double> ms = wall_ms(reps, [&] {
        if (in.pinned()) {
            check_cuda(cudaMemcpyAsync(d_in, in.data(), in.bytes(), cudaMemcpyHostToDevice, s[0]), "copy in");
            check_cuda(cudaMemcpyAsync(out.data(), d_out, out.bytes(), cudaMemcpyDeviceToHost, s[1]), "copy out");
            check_cuda(cudaStreamSynchronize(s[0]), "copy in");
            check_cuda(cudaStreamSynchronize(s[1]), "copy out");
        } else {
            std::thread back([&] {
                cudaSetDevice(0);
                cudaMemcpy(out.data(), d_out, out.bytes(), cudaMemcpyDeviceToHost);
            });
            check_cuda(cudaMemcpy(d_in, in.data(), in.bytes(), cudaMemcpyHostToDevice), "copy in");
            back.join();
        }
    });
    for (cudaStream_t st : s) {
        cudaStreamDestroy(st);
    }
    cudaFree(d_in);
    cudaFree(d_out);
    return ms[ms.size() / 2];
}

// Largest |out - sum| / (sum|k| max|x|) at 64 outputs of same-mode correlation, constant 0.
double check_max_err(const float *image, const float *out, int w, int h, const std::vector<float> &kernel, int k) {
    double sum_abs = 0.0;
    for (float v : kernel) {
        sum_abs += std::fabs(v);
    }
    const int o = (k - 1) / 2;
    double worst = 0.0;
    for (int s = 0; s < 64; s++) {
        const int x = int((uint64_t(s) * 7919 + 13) % uint64_t(w));
        const int y = s < 8 ? (s < 4 ? s : h - 1 - (s - 4)) : int((uint64_t(s) * 104729 + 7) % uint64_t(h));
        double sum = 0.0;
        for (int j = 0; j < k; j++) {
            for (int i = 0; i < k; i++) {
                const int xx = x + i - o, yy = y + j - o;
                if (xx >= 0 && xx < w && yy >= 0 && yy < h) {
                    sum += double(kernel[size_t(j) * k + i]) * image[size_t(yy) * w + xx];
                }
            }
        }
        worst = std::max(worst, std::fabs(out[size_t(y) * w + x] - sum) / sum_abs);
    }
    return worst;
}

size_t held_bytes(const std::vector<size_t> &before) {
    size_t most = 0;
    for (size_t d = 0; d < before.size(); d++) {
        size_t free = 0, total = 0;
        cudaSetDevice(int(d));
        cudaMemGetInfo(&free, &total);
        most = std::max(most, before[d] > free ? before[d] - free : 0);
    }
    cudaSetDevice(0);
    return most;
}

std::vector<size_t> free_bytes(int devices) {
    std::vector<size_t> f;
    for (int d = 0; d < devices; d++) {
        size_t free = 0, total = 0;
        cudaSetDevice(d);
        cudaMemGetInfo(&free, &total);
        f.push_back(free);
    }
    cudaSetDevice(0);
    return f;
}

}  // namespace

void bands_report(const std::vector<Size> &sizes, const std::vector<int> &kernels, int reps, bool pageable,
                  Table &table, const std::function<void()> &checkpoint) {
    int devices = 0;
    check_cuda(cudaGetDeviceCount(&devices), "device count");
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, 0), "device properties");
    for (const Size &size : sizes) {
        const size_t n = size_t(size.width) * size_t(size.height);
        for (bool pinned : {true, false}) {
            if (!pinned && !pageable) {
                continue;
            }
            HostImage image(n, pinned), out(n, pinned);
            fill(image.data(), n);
            const double floor_ms = copy_floor_ms(image, out, reps);
            std::printf("%dx%d %s: copy floor %.2f ms (%.1f GB/s in + out)\n", size.width, size.height,
                        pinned ? "pinned" : "pageable", floor_ms, double(image.bytes() + out.bytes()) / floor_ms / 1e6);
            for (int k : kernels) {
                std::vector<float> taps(size_t(k) * k);
                fill(taps.data(), taps.size());
                Halide::Runtime::Buffer<float> kernel(taps.data(), k, k);
                Halide::Runtime::Buffer<float> in_view(image.data(), size.width, size.height);
                Halide::Runtime::Buffer<float> out_view(out.data(), size.width, size.height);
                double one_gpu_ms = 0.0;
                for (int gpus : {1, devices}) {
                    if (gpus == devices && gpus == 1 && one_gpu_ms > 0.0) {
                        continue;
                    }
                    Options o;
                    o.device = Device::cuda;
                    o.bands.banding = Banding::always;
                    for (int d = 0; d < gpus; d++) {
                        o.bands.devices.push_back(d);
                    }
                    table.add_row();
                    table.set("device", prop.name);
                    table.set("gpus", int64_t(gpus));
                    table.set("memory", pinned ? "pinned" : "pageable");
                    table.set("precision", "f32");
                    table.set("width", int64_t(size.width));
                    table.set("height", int64_t(size.height));
                    table.set("K", int64_t(k));
                    table.set("copy_floor_ms", floor_ms);
                    try {
                        const std::vector<size_t> before = free_bytes(devices);
                        const Plan plan({size.width, size.height}, kernel, o);
                        table.set("algorithm", to_string(plan.dispatch().algorithm));
                        std::fill(out.data(), out.data() + n, std::nanf(""));
                        plan.apply(in_view, out_view);  // warm-up: band plans, lanes, modules
                        table.set("device_mib", double(held_bytes(before)) / double(1 << 20));
                        table.set("check_max_err",
                                  check_max_err(image.data(), out.data(), size.width, size.height, taps, k));
                        const std::vector<double> ms = wall_ms(reps, [&] { plan.apply(in_view, out_view); });
                        const double median = ms[ms.size() / 2];
                        table.set("median_ms", median);
                        table.set("min_ms", ms.front());
                        table.set("max_ms", ms.back());
                        table.set("gb_s", double(image.bytes() + out.bytes()) / median / 1e6);
                        table.set("fraction_of_copy_floor", floor_ms / median);
                        if (gpus == 1) {
                            one_gpu_ms = median;
                        } else {
                            table.set("scaling", one_gpu_ms / median / gpus);
                        }
                        table.set("status", "ok");
                        std::printf("  K %4d %-16s %d GPU(s): %9.2f ms  %6.1f GB/s  %.2f of the copy floor\n", k,
                                    to_string(plan.dispatch().algorithm), gpus, median,
                                    double(image.bytes() + out.bytes()) / median / 1e6, floor_ms / median);
                    } catch (const Error &e) {
                        table.set("status", "error");
                        table.set("note", e.what());
                        std::printf("  K %4d %d GPU(s): %s\n", k, gpus, e.what());
                    }
                    checkpoint();
                }
            }
        }
    }
}

}  // namespace halconv::bench
