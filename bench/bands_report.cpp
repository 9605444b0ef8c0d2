// The bands report (bands_report.h).
#include "bands_report.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <thread>

#include "gpu_common.h"
#include "halconv/halconv.h"

namespace halconv::bench {

const std::vector<std::string> bands_columns = {"device",
                                                "gpus",
                                                "memory",
                                                "precision",
                                                "width",
                                                "height",
                                                "K",
                                                "algorithm",
                                                "status",
                                                "median_ms",
                                                "min_ms",
                                                "max_ms",
                                                "gb_s",
                                                "copy_floor_ms",
                                                "fraction_of_copy_floor",
                                                "scaling",
                                                "copy_scaling",
                                                "device_mib",
                                                "check_max_err",
                                                "note"};

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

// The image copied in while the output is copied out, each of `gpus` devices moving its
// share of the rows (the bands' best case): two streams per device (pinned), or two
// threads per device (pageable: the driver stages those copies itself).
double copy_floor_ms(const HostImage &in, const HostImage &out, int reps, int gpus) {
    struct Share {
        void *in = nullptr, *out = nullptr;
        cudaStream_t s[2] = {};
        size_t first = 0, bytes = 0;
    };
    std::vector<Share> shares(static_cast<size_t>(gpus));
    for (int d = 0; d < gpus; d++) {
        Share &sh = shares[size_t(d)];
        sh.first = in.bytes() / 4 * size_t(d) / size_t(gpus) * 4;
        sh.bytes = in.bytes() / 4 * size_t(d + 1) / size_t(gpus) * 4 - sh.first;
        check_cuda(cudaSetDevice(d), "a device for the copy floor");
        check_cuda(cudaMalloc(&sh.in, sh.bytes), "device image for the copy floor");
        check_cuda(cudaMalloc(&sh.out, sh.bytes), "device output for the copy floor");
        for (cudaStream_t &st : sh.s) {
            check_cuda(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
        }
    }
    const auto host_in = reinterpret_cast<const char *>(in.data());
    const auto host_out = reinterpret_cast<char *>(out.data());
    const std::vector<double> ms = wall_ms(reps, [&] {
        if (in.pinned()) {
            for (int d = 0; d < gpus; d++) {
                const Share &sh = shares[size_t(d)];
                check_cuda(cudaSetDevice(d), "a device for the copy floor");
                check_cuda(cudaMemcpyAsync(sh.in, host_in + sh.first, sh.bytes, cudaMemcpyHostToDevice, sh.s[0]),
                           "copy in");
                check_cuda(cudaMemcpyAsync(host_out + sh.first, sh.out, sh.bytes, cudaMemcpyDeviceToHost, sh.s[1]),
                           "copy out");
            }
            for (const Share &sh : shares) {
                check_cuda(cudaStreamSynchronize(sh.s[0]), "copy in");
                check_cuda(cudaStreamSynchronize(sh.s[1]), "copy out");
            }
        } else {
            std::vector<std::thread> copies;
            for (int d = 0; d < gpus; d++) {
                const Share &sh = shares[size_t(d)];
                copies.emplace_back([&, d] {
                    cudaSetDevice(d);
                    cudaMemcpy(sh.in, host_in + sh.first, sh.bytes, cudaMemcpyHostToDevice);
                });
                copies.emplace_back([&, d] {
                    cudaSetDevice(d);
                    cudaMemcpy(host_out + sh.first, sh.out, sh.bytes, cudaMemcpyDeviceToHost);
                });
            }
            for (std::thread &t : copies) {
                t.join();
            }
        }
    });
    for (int d = 0; d < gpus; d++) {
        Share &sh = shares[size_t(d)];
        cudaSetDevice(d);
        for (cudaStream_t st : sh.s) {
            cudaStreamDestroy(st);
        }
        cudaFree(sh.in);
        cudaFree(sh.out);
    }
    cudaSetDevice(0);
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
    std::vector<int> gpu_counts = {1};
    if (devices > 1) {
        gpu_counts.push_back(devices);
    }
    for (const Size &size : sizes) {
        const size_t n = size_t(size.width) * size_t(size.height);
        const HostImage pinned_image(n, true), pinned_out(n, true);
        fill(pinned_image.data(), n);
        for (const std::string memory : {"pinned", "device", "pageable"}) {
            if ((memory == "pageable" && !pageable) || (memory == "device" && devices < 2)) {
                continue;
            }
            std::unique_ptr<HostImage> pageable_image, pageable_out;
            if (memory == "pageable") {
                pageable_image = std::make_unique<HostImage>(n, false);
                pageable_out = std::make_unique<HostImage>(n, false);
                fill(pageable_image->data(), n);
            }
            const HostImage &image = pageable_image ? *pageable_image : pinned_image;
            const HostImage &out = pageable_out ? *pageable_out : pinned_out;
            const double bytes = double(image.bytes() + out.bytes());
            std::vector<double> floor_ms(size_t(devices + 1), 0.0);  // by GPU count
            if (memory != "device") {
                for (int gpus : gpu_counts) {
                    floor_ms[size_t(gpus)] = copy_floor_ms(image, out, reps, gpus);
                    std::printf("%dx%d %s, %d GPU(s): copy floor %.2f ms (%.1f GB/s in + out)\n", size.width,
                                size.height, memory.c_str(), gpus, floor_ms[size_t(gpus)],
                                bytes / floor_ms[size_t(gpus)] / 1e6);
                }
            }
            // Device-resident: the image and output in device 0's memory, copied there from
            // the pinned buffers (the output is copied back for the check).
            Halide::Runtime::Buffer<float> in_view(image.data(), size.width, size.height);
            Halide::Runtime::Buffer<float> out_view(out.data(), size.width, size.height);
            if (memory == "device") {
                check_cuda(cudaSetDevice(0), "device 0");
                in_view.set_host_dirty();
                in_view.copy_to_device(cuda_device_interface());
                out_view.device_malloc(cuda_device_interface());
            }
            for (int k : kernels) {
                std::vector<float> taps(size_t(k) * k);
                fill(taps.data(), taps.size());
                Halide::Runtime::Buffer<float> kernel(taps.data(), k, k);
                // Host memory: bands on one GPU, then on all. Device memory: the default call on
                // device 0 (Banding::automatic: one-shot, or bands where the one-shot pipelines
                // cannot hold the image), bands on device 0, then bands on all; scaling from the
                // faster of the first two.
                struct Run {
                    int gpus;
                    Banding banding;
                };
                std::vector<Run> runs;
                if (memory == "device") {
                    runs = {{1, Banding::automatic}, {1, Banding::always}, {devices, Banding::always}};
                } else {
                    for (int gpus : gpu_counts) {
                        runs.push_back({gpus, Banding::always});
                    }
                }
                double one_gpu_ms = 0.0;
                for (const Run &run : runs) {
                    Options o;
                    o.device = Device::cuda;
                    o.bands.banding = run.banding;
                    for (int d = 0; d < run.gpus; d++) {
                        o.bands.devices.push_back(d);
                    }
                    table.add_row();
                    table.set("device", prop.name);
                    table.set("gpus", int64_t(run.gpus));
                    table.set("memory", memory);
                    table.set("precision", "f32");
                    table.set("width", int64_t(size.width));
                    table.set("height", int64_t(size.height));
                    table.set("K", int64_t(k));
                    if (memory != "device") {
                        table.set("copy_floor_ms", floor_ms[size_t(run.gpus)]);
                        if (run.gpus > 1) {
                            table.set("copy_scaling", floor_ms[1] / floor_ms[size_t(run.gpus)] / run.gpus);
                        }
                    }
                    const bool automatic = run.banding == Banding::automatic;
                    table.set("note", automatic ? "Banding::automatic" : "Banding::always");
                    try {
                        const std::vector<size_t> before = free_bytes(devices);
                        const Plan plan({size.width, size.height}, kernel, o);
                        table.set("algorithm", to_string(plan.dispatch().algorithm));
                        std::fill(out.data(), out.data() + n, std::nanf(""));
                        if (memory == "device") {
                            out_view.set_host_dirty();
                            out_view.copy_to_device(cuda_device_interface());  // NaN there too
                        }
                        const auto apply = [&] {
                            plan.apply(in_view, out_view);
                            if (memory == "device") {
                                check_cuda(cudaDeviceSynchronize(), "the device-resident call");
                            }
                        };
                        apply();  // warm-up: band plans, lanes, modules
                        table.set("device_mib", double(held_bytes(before)) / double(1 << 20));
                        if (memory == "device") {
                            out_view.copy_to_host();
                        }
                        table.set("check_max_err",
                                  check_max_err(image.data(), out.data(), size.width, size.height, taps, k));
                        const std::vector<double> ms = wall_ms(reps, apply);
                        const double median = ms[ms.size() / 2];
                        table.set("median_ms", median);
                        table.set("min_ms", ms.front());
                        table.set("max_ms", ms.back());
                        table.set("gb_s", bytes / median / 1e6);
                        if (memory != "device") {
                            table.set("fraction_of_copy_floor", floor_ms[size_t(run.gpus)] / median);
                        }
                        if (run.gpus == 1) {
                            one_gpu_ms = one_gpu_ms > 0.0 ? std::min(one_gpu_ms, median) : median;
                        } else if (one_gpu_ms > 0.0) {
                            table.set("scaling", one_gpu_ms / median / run.gpus);
                        }
                        table.set("status", "ok");
                        std::printf("  K %4d %-16s %s %d GPU(s): %9.2f ms  %6.1f GB/s", k,
                                    to_string(plan.dispatch().algorithm), automatic ? "automatic" : "bands    ",
                                    run.gpus, median, bytes / median / 1e6);
                        if (memory != "device") {
                            std::printf("  %.2f of the copy floor", floor_ms[size_t(run.gpus)] / median);
                        }
                        if (run.gpus > 1 && one_gpu_ms > 0.0) {
                            std::printf("  scaling %.2f", one_gpu_ms / median / run.gpus);
                        }
                        std::printf("\n");
                    } catch (const Error &e) {
                        table.set("status", "error");
                        table.set("note", e.what());
                        std::printf("  K %4d %d GPU(s): %s\n", k, run.gpus, e.what());
                    }
                    checkpoint();
                }
            }
        }
    }
}

}  // namespace halconv::bench
