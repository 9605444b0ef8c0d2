// `halconv info` (versions, devices, compiled pipelines) and `halconv bench-quick` (a
// small timing table on whatever device is here; bench/ has the full protocol).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "halconv/float16.h"
#include "kernel_spec.h"

namespace halconv::cli {
namespace {

const char *const bench_quick_usage =
    "usage: halconv bench-quick [--device auto|cpu|cuda] [--sizes N,N...] [--kernels K,K...] [--reps R]\n"
    "  Times each algorithm on random square images (correlation, mode same, reflect) and the\n"
    "  composed pipelines, on the device, with data resident there; wall time per call until\n"
    "  the result is complete, median of R (default 5) after one warm-up call.\n"
    "  Defaults: GPU sizes 1024,4096 and kernels 3,15,31; CPU sizes 512,1024 and kernels 3,15.";

std::vector<int> parse_int_list(const std::string &flag, const std::string &value) {
    std::vector<int> out;
    std::stringstream ss(value);
    for (std::string item; std::getline(ss, item, ',');) {
        const double v = parse_number(flag, item);
        if (v < 1 || v > 16384 || v != static_cast<int>(v)) {
            throw UsageError(flag + " " + value + ": allowed whole numbers from 1 to 16384, comma-separated");
        }
        out.push_back(static_cast<int>(v));
    }
    if (out.empty()) {
        throw UsageError(flag + " needs at least one number");
    }
    return out;
}

// Random values in [0, 1) in float32 or float16, resident on the device that runs.
Halide::Runtime::Buffer<> random_buffer(halide_type_t type, int width, int height, Device device, std::mt19937 &rng) {
    Halide::Runtime::Buffer<> b(type, width, height);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    for (size_t i = 0; i < b.number_of_elements(); i++) {
        const float v = u(rng);
        if (type.bits == 32) {
            static_cast<float *>(b.data())[i] = v;
        } else {
            static_cast<uint16_t *>(b.data())[i] = float16_bits_from_double(v);
        }
    }
    b.set_host_dirty();
    if (device == Device::cuda && b.copy_to_device(cuda_device_interface()) != 0) {
        throw Error(ErrorCode::invalid_argument, "could not copy the benchmark data to the GPU");
    }
    return b;
}

template <typename Fn>
double median_ms(int reps, Halide::Runtime::Buffer<> &out, Fn fn) {
    fn();
    out.device_sync();
    std::vector<double> ms;
    for (int r = 0; r < reps; r++) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        out.device_sync();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

}  // namespace

int info_command(const std::vector<std::string> &args) {
    if (!CommandLine("info",
                     "usage: halconv info\n  Versions, CUDA devices and the pipelines compiled into this build.")
             .parse(args)) {
        return 0;
    }
    const BuildInfo info = build_info();
    std::printf("halconv %s, Halide %s\n", info.version.c_str(), info.halide_version.c_str());
    std::printf("CPU pipelines: Halide targets %s (best one the CPU supports is chosen at run time)\n",
                info.cpu_targets.c_str());
    const CudaInfo cuda = cuda_info();
    if (!cuda.built) {
        std::printf("CUDA pipelines: none (%s)\n", cuda.unavailable_reason.c_str());
    } else {
        std::printf("CUDA pipelines: Halide target %s; tensor-core kernels for CUDA architectures %s\n",
                    info.cuda_target.c_str(), info.cuda_architectures.c_str());
        const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
        if (cuda.devices.empty()) {
            std::printf("CUDA: runtime %s; %s (GPU algorithms unavailable, the CPU runs)\n",
                        version(cuda.runtime_version).c_str(), cuda.unavailable_reason.c_str());
        } else {
            std::printf("CUDA: runtime %s, driver %s, %zu device(s)\n", version(cuda.runtime_version).c_str(),
                        version(cuda.driver_version).c_str(), cuda.devices.size());
            for (const CudaDevice &d : cuda.devices) {
                std::printf("  [%d] %s, compute capability %d.%d, %d SMs, %.1f GiB%s\n", d.ordinal, d.name.c_str(),
                            d.compute_capability_major, d.compute_capability_minor, d.multiprocessors,
                            double(d.memory_bytes) / double(1 << 30), d.ordinal == 0 ? " (used)" : "");
            }
        }
        for (const CudaLibraryInfo &l : cuda.libraries) {
            std::printf(
                "  %s: %s\n", l.name.c_str(),
                l.unavailable_reason.empty() ? l.path.c_str() : ("not usable, " + l.unavailable_reason).c_str());
        }
    }
    const std::string data = data_dir();
    std::printf("Data (the demo's photo): %s\n", data.empty() ? "not found (set HALCONV_DATA_DIR)" : data.c_str());
    std::printf("Algorithms of correlate2d / convolve2d (the registry, variants.cmake), and auto:\n");
    for (const AlgorithmInfo &a : algorithms()) {
        std::string devices, precisions;
        for (Device d : a.devices) {
            devices += std::string(devices.empty() ? "" : ",") + to_string(d);
        }
        for (Precision p : a.precisions) {
            precisions += std::string(precisions.empty() ? "" : ",") + to_string(p);
        }
        if (a.devices.empty()) {
            devices = "-";
            precisions = "(not in this build)";
        }
        std::printf("  %-26s %-9s %-19s %s\n", a.name.c_str(), devices.c_str(), precisions.c_str(),
                    a.description.c_str());
    }
    std::printf(
        "Pipelines: edges (fused, staged), unsharp (tensor-core blur), gaussian_blur (separable, any sigma; "
        "recursive, sigma %g to %g)\n",
        min_recursive_sigma, max_recursive_sigma);
    const std::string wisdom = default_wisdom_path();
    std::printf("Auto's measurements (wisdom file %s, $HALCONV_WISDOM; halconv tune writes it):\n",
                wisdom.empty() ? "(no location: set HALCONV_WISDOM)" : wisdom.c_str());
    std::vector<Device> kinds{Device::cpu};
    if (cuda_available()) {
        kinds.push_back(Device::cuda);
    }
    for (Device kind : kinds) {
        const DeviceIdentity id = identify_device(kind);
        const CostTable table = cost_table(id);
        std::printf("  %s: %zu measurements, %s\n", describe(id).c_str(), table.measurements.size(),
                    table.source.c_str());
    }
    std::printf("Compiled AOT pipelines (%zu):\n", info.pipelines.size());
    for (const std::string &name : info.pipelines) {
        std::printf("  %s\n", name.c_str());
    }
    return 0;
}

int bench_quick_command(const std::vector<std::string> &args) {
    Device device = Device::automatic;
    std::vector<int> sizes, kernels;
    int reps = 5;
    CommandLine line("bench-quick", bench_quick_usage);
    line.option("--device", [&](const std::string &a, const std::string &v) { device = parse_device(a, v); })
        .option("--sizes", [&](const std::string &a, const std::string &v) { sizes = parse_int_list(a, v); })
        .option("--kernels", [&](const std::string &a, const std::string &v) { kernels = parse_int_list(a, v); })
        .option("--reps", [&](const std::string &a, const std::string &v) { reps = parse_int_list(a, v).front(); });
    if (!line.parse(args)) {
        return 0;
    }
    if (device == Device::automatic) {
        device = cuda_available() ? Device::cuda : Device::cpu;
    }
    const bool gpu = device == Device::cuda;
    if (gpu && !cuda_available()) {
        throw Error(ErrorCode::invalid_argument, "--device cuda: no usable CUDA device here");
    }
    if (sizes.empty()) {
        sizes = gpu ? std::vector<int>{1024, 4096} : std::vector<int>{512, 1024};
    }
    if (kernels.empty()) {
        kernels = gpu ? std::vector<int>{3, 15, 31} : std::vector<int>{3, 15};
    }
    std::printf("device %s%s; wall ms per call, median of %d\n", to_string(device),
                gpu ? "" : " (no CUDA device, or --device cpu)", reps);
    std::printf("%-18s %-7s %6s %4s %10s %10s\n", "algorithm", "prec", "size", "K", "ms", "Mpixel/s");
    std::mt19937 rng(2026);
    const auto row = [&](const std::string &name, const char *precision, int size, int k, double ms) {
        std::printf("%-18s %-7s %6d %4d %10.3f %10.1f\n", name.c_str(), precision, size, k, ms,
                    double(size) * size / (ms * 1e3));
    };
    for (int size : sizes) {
        Halide::Runtime::Buffer<> image = random_buffer(halide_type_of<float>(), size, size, device, rng);
        Halide::Runtime::Buffer<> image16 =
            random_buffer(halide_type_t(halide_type_float, 16), size, size, device, rng);
        Halide::Runtime::Buffer<> out(halide_type_of<float>(), size, size);
        for (int k : kernels) {
            Halide::Runtime::Buffer<> kernel = random_buffer(halide_type_of<float>(), k, k, Device::cpu, rng);
            Halide::Runtime::Buffer<> kernel16 =
                random_buffer(halide_type_t(halide_type_float, 16), k, k, Device::cpu, rng);
            Options o;
            o.device = device;
            o.boundary = Boundary::reflect;
            // auto, then every algorithm of the device that takes a general kernel.
            std::vector<Algorithm> to_time{Algorithm::automatic};
            for (const AlgorithmInfo &info : algorithms()) {
                if (info.max_kernel_rank == 0 &&
                    std::find(info.devices.begin(), info.devices.end(), device) != info.devices.end()) {
                    to_time.push_back(info.algorithm);
                }
            }
            for (Algorithm a : to_time) {
                o.algorithm = a;
                o.precision = uses_tensor_cores(a) ? Precision::f16f32 : Precision::f32;
                Halide::Runtime::Buffer<> &in = uses_tensor_cores(a) ? image16 : image;
                Halide::Runtime::Buffer<> &ker = uses_tensor_cores(a) ? kernel16 : kernel;
                try {
                    row(to_string(a), to_string(o.precision), size, k,
                        median_ms(reps, out, [&] { correlate2d(in, ker, out, o); }));
                } catch (const Error &e) {
                    std::printf("%-18s %-7s %6d %4d   skipped: %s\n", to_string(a), to_string(o.precision), size, k,
                                e.what());
                }
            }
            o.precision = Precision::f32;
            row("gaussian_blur", "f32", size, k,
                median_ms(reps, out, [&] { gaussian_blur(image, out, k / 6.0, o, k | 1); }));
            if (k / 6.0 >= min_recursive_sigma) {
                row("gaussian_recursive", "f32", size, k,
                    median_ms(reps, out, [&] { gaussian_blur(image, out, k / 6.0, o, GaussianMethod::recursive); }));
            }
            // A Laplacian of Gaussian (rank 2), as Auto runs it (low_rank where that is fastest).
            const io::KernelTaps log =
                io::parse_kernel_spec("log:sigma=" + std::to_string(k / 8.0) + ",size=" + std::to_string(k | 1));
            Halide::Runtime::Buffer<float> log_kernel = plane_of(log.taps, log.width, log.height);
            o.algorithm = Algorithm::automatic;
            const Algorithm log_algorithm = correlate2d(image, log_kernel, out, o).algorithm;
            row(std::string("log_") + to_string(log_algorithm), "f32", size, k,
                median_ms(reps, out, [&] { correlate2d(image, log_kernel, out, o); }));
            // The bilateral filter of radius k / 2 (sigma_spatial half of it, sigma_range 0.1).
            BilateralOptions bo;
            bo.device = device;
            bo.boundary = Boundary::reflect;
            const int radius = std::max(1, std::min(k / 2, size - 1));
            row("bilateral_r" + std::to_string(radius), "f32", size, k,
                median_ms(reps, out, [&] { bilateral_filter(image, out, radius / 2.0, 0.1, radius, bo); }));
        }
        Halide::Runtime::Buffer<> edges(halide_type_of<uint8_t>(), size, size);
        PipelineOptions po;
        po.device = device;
        for (Staging s : {Staging::fused, Staging::staged}) {
            po.staging = s;
            row(std::string("edges_") + to_string(s), "f32", size, 5,
                median_ms(reps, edges, [&] { detect_edges(image, edges, default_edge_threshold, po); }));
        }
    }
    return 0;
}

}  // namespace halconv::cli
