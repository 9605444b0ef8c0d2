// halconv GPU benchmark (seed 000 §5.1 protocol): data resident on the GPU, CUDA
// events, warm-up, median of --reps runs; ceilings (device-to-device copy bandwidth)
// measured in the same run. Prints a table and writes CSV rows.
//
//   halconv_bench [--sizes 4096] [--kernels 3,15,31] [--precision f32]
//                 [--algorithms naive,shared_tiled,autoscheduled] [--gaussian 31]
//                 [--reps 20] [--csv FILE] [--mode same|valid|full] [--pipelines 0|1]
// --pipelines 1 adds the composed pipelines per size (float32, reflect): edge detection
// fused and stage by stage, the unsharp mask with a 49x49 Gaussian (sigma 8) on tensor
// cores, and gaussian_blur at sigma 3, 10 and 25 (the last through the two-pass schedule).
// Algorithms: naive, shared_tiled, autoscheduled, im2tensor, im2tensor_fused,
// im2tensor_atomic, diagonal_unroll (m16n16k16), diagonal_unroll_m32n8k16. Useful
// TFLOP/s counts 2 (H-K+1)(W-K+1) K^2 whatever the mode (seed 000's valid convolution).
#include "../src/internal.h"
#include "gpu_delay.h"
#include "halconv/float16.h"
#include "halconv/halconv.h"

#include <cuda_runtime.h>

#include "HalideRuntimeCuda.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

using halconv::Algorithm;
using halconv::Precision;

void check_cuda(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        std::fprintf(stderr, "CUDA error in %s: %s\n", what, cudaGetErrorString(e));
        std::exit(1);
    }
}

std::vector<int> parse_ints(const std::string &s) {
    std::vector<int> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        v.push_back(std::stoi(item));
    }
    return v;
}

std::vector<std::string> parse_list(const std::string &s) {
    std::vector<std::string> v;
    std::stringstream ss(s);
    std::string item;
    while (std::getline(ss, item, ',')) {
        v.push_back(item);
    }
    return v;
}

Precision precision_of(const std::string &s) {
    for (Precision p : {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32}) {
        if (s == halconv::to_string(p)) {
            return p;
        }
    }
    throw halconv::Error("unknown precision " + s);
}

struct AlgorithmChoice {
    Algorithm algorithm;
    halconv::TensorCoreShape shape;
};

// Algorithm names as halconv::to_string writes them; diagonal_unroll takes the
// m16n16k16 layout, diagonal_unroll_m32n8k16 the other.
AlgorithmChoice algorithm_of(const std::string &s) {
    if (s == "diagonal_unroll_m32n8k16") {
        return {Algorithm::diagonal_unroll, halconv::TensorCoreShape::m32n8k16};
    }
    for (Algorithm a : {Algorithm::naive, Algorithm::shared_tiled, Algorithm::separable, Algorithm::autoscheduled,
                        Algorithm::im2tensor, Algorithm::im2tensor_fused, Algorithm::im2tensor_atomic,
                        Algorithm::diagonal_unroll}) {
        if (s == halconv::to_string(a)) {
            return {a, halconv::TensorCoreShape::m16n16k16};
        }
    }
    throw halconv::Error("unknown algorithm " + s);
}

halconv::Mode mode_of(const std::string &s) {
    for (halconv::Mode m : {halconv::Mode::valid, halconv::Mode::same, halconv::Mode::full}) {
        if (s == halconv::to_string(m)) {
            return m;
        }
    }
    throw halconv::Error("unknown mode " + s);
}

struct Timing {
    double median_ms, min_ms, max_ms;
};

// Times fn (which queues device work on stream) with events, after warm-up.
template <typename Fn>
Timing time_on_stream(cudaStream_t stream, int reps, Fn fn) {
    cudaEvent_t start, stop;
    check_cuda(cudaEventCreate(&start), "event");
    check_cuda(cudaEventCreate(&stop), "event");
    for (int i = 0; i < 3; i++) {
        fn();
    }
    check_cuda(cudaStreamSynchronize(stream), "warm-up");
    std::vector<double> ms;
    for (int i = 0; i < reps; i++) {
        check_cuda(static_cast<cudaError_t>(queue_gpu_delay(2'000'000, stream)), "delay");
        check_cuda(cudaEventRecord(start, stream), "record");
        fn();
        check_cuda(cudaEventRecord(stop, stream), "record");
        check_cuda(cudaEventSynchronize(stop), "sync");
        float t = 0.0f;
        check_cuda(cudaEventElapsedTime(&t, start, stop), "elapsed");
        ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return {ms[ms.size() / 2], ms.front(), ms.back()};
}

// Writes v into element i of a dense float buffer of any of halconv's storage types.
void store_value(Halide::Runtime::Buffer<> &b, size_t i, double v) {
    uint8_t *p = b.raw_buffer()->host + i * b.type().bytes();
    if (b.type().bits == 64) {
        *reinterpret_cast<double *>(p) = v;
    } else if (b.type().bits == 32) {
        *reinterpret_cast<float *>(p) = static_cast<float>(v);
    } else {
        *reinterpret_cast<uint16_t *>(p) = halconv::float16_bits_from_double(v);
    }
}

// Random values in [0, 1) (seed 000's protocol), host copy kept clean so the API's
// kernel checks read it without a device round trip.
Halide::Runtime::Buffer<> device_random(halide_type_t type, int w, int h, std::mt19937_64 &rng) {
    Halide::Runtime::Buffer<> b(type, w, h);
    std::uniform_real_distribution<double> dist(0.0, 1.0);
    for (size_t i = 0; i < b.number_of_elements(); i++) {
        store_value(b, i, dist(rng));
    }
    b.set_host_dirty();
    if (b.copy_to_device(halide_cuda_device_interface()) != 0) {
        throw halconv::Error("could not copy benchmark data to the GPU");
    }
    return b;
}

}  // namespace

int main(int argc, char **argv) {
    std::vector<int> sizes{4096}, kernels{3, 15, 31};
    std::vector<std::string> algorithms{"naive", "shared_tiled", "autoscheduled"};
    std::string precision_name = "f32", csv_path, mode_name = "same";
    int gaussian_k = 31, reps = 20;
    bool pipelines = false;
    for (int i = 1; i + 1 < argc; i += 2) {
        const std::string a = argv[i], v = argv[i + 1];
        if (a == "--sizes") {
            sizes = parse_ints(v);
        } else if (a == "--kernels") {
            kernels = parse_ints(v);
        } else if (a == "--algorithms") {
            algorithms = parse_list(v);
        } else if (a == "--precision") {
            precision_name = v;
        } else if (a == "--gaussian") {
            gaussian_k = std::stoi(v);
        } else if (a == "--reps") {
            reps = std::max(20, std::stoi(v));
        } else if (a == "--mode") {
            mode_name = v;
        } else if (a == "--pipelines") {
            pipelines = v == "1";
        } else if (a == "--csv") {
            csv_path = v;
        } else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    if (!halconv::cuda_available()) {
        std::fprintf(stderr, "halconv_bench: no CUDA device; the benchmark times GPU pipelines only\n");
        return 1;
    }
    const Precision precision = precision_of(precision_name);
    const halconv::Mode mode = mode_of(mode_name);
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, 0), "properties");
    cudaStream_t stream = nullptr;
    check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "stream");

    // Ceiling: device-to-device copy of 1 GiB, bytes read + written.
    const size_t copy_bytes = size_t(1) << 30;
    void *a = nullptr, *b = nullptr;
    check_cuda(cudaMalloc(&a, copy_bytes), "malloc");
    check_cuda(cudaMalloc(&b, copy_bytes), "malloc");
    check_cuda(cudaMemset(a, 1, copy_bytes), "memset");
    const Timing copy = time_on_stream(stream, reps, [&] { cudaMemcpyAsync(b, a, copy_bytes, cudaMemcpyDeviceToDevice, stream); });
    const double bandwidth = 2.0 * copy_bytes / (copy.median_ms * 1e-3);
    cudaFree(a);
    cudaFree(b);
    std::printf("device: %s, %d SMs; d2d copy bandwidth %.0f GB/s (read+write)\n", prop.name,
                prop.multiProcessorCount, bandwidth / 1e9);

    std::ofstream csv;
    if (!csv_path.empty()) {
        csv.open(csv_path);
        csv << "device,algorithm,precision,mode,width,height,K,median_ms,min_ms,max_ms,useful_tflops,memory_floor_ms,"
               "fraction_of_memory_floor\n";
    }
    std::mt19937_64 rng(20261122);
    const halconv::internal::PrecisionTypes types = halconv::internal::types_of(precision);
    halconv::internal::install_runtime_hooks();
    std::printf("%-16s %-7s %6s %4s %10s %10s %9s %8s\n", "algorithm", "prec", "size", "K", "median_ms", "floor_ms",
                "TFLOP/s", "floor%");

    auto report = [&](const std::string &name, int size, int k, halconv::Mode m, const Timing &t) {
        const halconv::Extent2d e = halconv::output_extent({size, size}, {k, k}, m);
        const double out_px = double(e.width) * e.height;
        const double bytes = out_px * types.storage.bytes() + out_px * types.output.bytes();
        const double floor_ms = bytes / bandwidth * 1e3;
        const double useful = 2.0 * double(size - k + 1) * double(size - k + 1) * k * k / (t.median_ms * 1e-3) / 1e12;
        std::printf("%-16s %-7s %6d %4d %10.4f %10.4f %9.2f %7.0f%%\n", name.c_str(), precision_name.c_str(), size, k,
                    t.median_ms, floor_ms, useful, 100.0 * floor_ms / t.median_ms);
        if (csv.is_open()) {
            csv << prop.name << "," << name << "," << precision_name << "," << halconv::to_string(m) << "," << size << "," << size << "," << k << ","
                << t.median_ms << "," << t.min_ms << "," << t.max_ms << "," << useful << "," << floor_ms << ","
                << floor_ms / t.median_ms << "\n";
        }
    };

    for (int size : sizes) {
        Halide::Runtime::Buffer<> input = device_random(types.storage, size, size, rng);
        for (int k : kernels) {
            Halide::Runtime::Buffer<> kernel = device_random(types.storage, k, k, rng);
            const halconv::Extent2d extent = halconv::output_extent({size, size}, {k, k}, mode);
            Halide::Runtime::Buffer<> output(types.output, extent.width, extent.height);
            check_cuda(output.device_malloc(halide_cuda_device_interface()) == 0 ? cudaSuccess : cudaErrorMemoryAllocation,
                       "output allocation");
            for (const std::string &name : algorithms) {
                halconv::Options o;
                const AlgorithmChoice choice = algorithm_of(name);
                o.algorithm = choice.algorithm;
                o.tensor_core_shape = choice.shape;
                o.precision = precision;
                o.mode = mode;
                o.boundary = halconv::Boundary::reflect;
                o.device = halconv::Device::cuda;
                o.stream = stream;
                try {
                    const Timing t = time_on_stream(stream, reps, [&] { halconv::correlate2d(input, kernel, output, o); });
                    report(name, size, k, mode, t);
                } catch (const halconv::Error &e) {
                    std::printf("%-16s %-7s %6d %4d  skipped: %s\n", name.c_str(), precision_name.c_str(), size, k,
                                e.what());
                }
            }
        }
        if (gaussian_k > 0) {
            // Separable Gaussian, sigma = K / 6, through the separable entry point.
            const int k = gaussian_k;
            Halide::Runtime::Buffer<> taps(types.storage, k);
            double total = 0.0;
            std::vector<double> g(k);
            for (int i = 0; i < k; i++) {
                const double x = i - (k - 1) / 2.0, sigma = k / 6.0;
                g[i] = std::exp(-x * x / (2 * sigma * sigma));
                total += g[i];
            }
            for (int i = 0; i < k; i++) {
                store_value(taps, i, g[i] / total);
            }
            taps.set_host_dirty();
            taps.copy_to_device(halide_cuda_device_interface());
            Halide::Runtime::Buffer<> output(types.output, size, size);
            halconv::Options o;
            o.precision = precision;
            o.boundary = halconv::Boundary::reflect;
            o.device = halconv::Device::cuda;
            o.stream = stream;
            const Timing t =
                time_on_stream(stream, reps, [&] { halconv::separable_correlate2d(input, taps, taps, output, o); });
            report("separable_gauss", size, k, halconv::Mode::same, t);
        }
    }
    if (pipelines) {
        std::printf("\n%-22s %6s %10s %10s %8s\n", "pipeline", "size", "median_ms", "floor_ms", "floor%");
        // floor: the bytes a single pass must move, the image read and the output written.
        auto report_pipeline = [&](const std::string &name, int size, const Timing &t, int out_bytes) {
            const double floor_ms = double(size) * size * (4 + out_bytes) / bandwidth * 1e3;
            std::printf("%-22s %6d %10.4f %10.4f %7.0f%%\n", name.c_str(), size, t.median_ms, floor_ms,
                        100.0 * floor_ms / t.median_ms);
            if (csv.is_open()) {
                csv << prop.name << "," << name << ",f32,same," << size << "," << size << ",0," << t.median_ms << ","
                    << t.min_ms << "," << t.max_ms << ",," << floor_ms << "," << floor_ms / t.median_ms << "\n";
            }
        };
        for (int size : sizes) {
            Halide::Runtime::Buffer<> image = device_random(halide_type_of<float>(), size, size, rng);
            Halide::Runtime::Buffer<uint8_t> edges(size, size);
            edges.device_malloc(halide_cuda_device_interface());
            halconv::PipelineOptions po;
            po.device = halconv::Device::cuda;
            po.stream = stream;
            for (halconv::Staging st : {halconv::Staging::fused, halconv::Staging::staged}) {
                po.staging = st;
                const Timing t =
                    time_on_stream(stream, reps, [&] { halconv::detect_edges(image, edges, 0.02, po); });
                report_pipeline(std::string("edges_") + halconv::to_string(st), size, t, 1);
            }
            Halide::Runtime::Buffer<float> blur_kernel(49, 49), sharpened(size, size);
            const std::vector<double> g = halconv::gaussian_taps(8.0, 49);
            blur_kernel.for_each_element([&](int x, int y) { blur_kernel(x, y) = static_cast<float>(g[x] * g[y]); });
            sharpened.device_malloc(halide_cuda_device_interface());
            const Timing tu =
                time_on_stream(stream, reps, [&] { halconv::unsharp_mask(image, blur_kernel, sharpened, 1.0, po); });
            report_pipeline("unsharp_tc_k49", size, tu, 4);
            halconv::Options go;
            go.device = halconv::Device::cuda;
            go.boundary = halconv::Boundary::reflect;
            go.stream = stream;
            for (double sigma : {3.0, 10.0, 25.0}) {
                const Timing tg =
                    time_on_stream(stream, reps, [&] { halconv::gaussian_blur(image, sharpened, sigma, go); });
                report_pipeline("gaussian_blur_s" + std::to_string(int(sigma)) + "_k" +
                                    std::to_string(halconv::gaussian_taps(sigma).size()),
                                size, tg, 4);
            }
        }
    }
    cudaStreamDestroy(stream);
    return 0;
}
