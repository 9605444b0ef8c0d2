// halconv command-line tool: the commands of commands.h and `demo`, which runs the
// library on a PNG (default: the bundled cameraman) on the GPU when one is present,
// else on the CPU (saying so): edge detection fused and stage by stage, a large
// Gaussian blur, an unsharp mask with a tensor-core blur and a random kernel through
// every algorithm, printing a timing table and writing each result as a PNG.
//   halconv demo [IMAGE.png] [--out DIR] [--device auto|cpu|cuda]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "cli_common.h"
#include "commands.h"
#include "halconv/float16.h"
#include "halconv/halconv.h"
#include "image_io.h"

namespace {

using halconv::Algorithm;
using Halide::Runtime::Buffer;

void write_plane(const std::string &path, const Buffer<float> &img) {
    halconv::io::Image image;
    image.width = img.width();
    image.height = img.height();
    image.channels.push_back(halconv::cli::samples_of(img));
    halconv::io::write_png(path, image);
}

struct Row {
    std::string filter, algorithm, precision;
    double ms;
};

// Median wall time of 7 calls (the first pays JIT compilation and uploads), each until
// the result is back on the host.
template <typename Fn>
double median_wall_ms(Fn fn) {
    std::vector<double> ms;
    for (int rep = 0; rep < 7; rep++) {
        const auto t0 = std::chrono::steady_clock::now();
        fn();
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

int demo(const std::vector<std::string> &args) {
    std::vector<std::string> words;
    std::string out_dir = "out";
    halconv::Device device = halconv::Device::automatic;
    halconv::cli::CommandLine line("demo", "usage: halconv demo [IMAGE.png] [--out DIR] [--device auto|cpu|cuda]");
    line.paths(words)
        .option("--out", [&](const std::string &, const std::string &v) { out_dir = v; })
        .option("--device",
                [&](const std::string &a, const std::string &v) { device = halconv::cli::parse_device(a, v); });
    if (!line.parse(args)) {
        return 0;
    }
    if (words.size() > 1) {
        throw halconv::cli::UsageError("unexpected argument " + words[1] + " (the demo takes one IMAGE.png)");
    }
    std::string input = words.empty() ? "" : words.front();
    if (input.empty()) {
        const std::string data = halconv::cli::data_dir();
        if (data.empty()) {
            throw halconv::cli::UsageError(
                "no default photo (cameraman.png) in $HALCONV_DATA_DIR, the installed "
                "share/halconv or the source tree; give the demo an IMAGE.png");
        }
        input = data + "/cameraman.png";
    }
    if (device == halconv::Device::automatic) {
        device = halconv::cuda_available() ? halconv::Device::cuda : halconv::Device::cpu;
        if (device == halconv::Device::cpu) {
            std::puts("no CUDA device found: running on the CPU (tensor-core algorithms need a GPU)");
        }
    }
    const bool gpu = device == halconv::Device::cuda;
    std::filesystem::create_directories(out_dir);
    Buffer<float> image = halconv::cli::luma_plane(halconv::io::read_png(input));
    const int w = image.width(), h = image.height();
    std::printf("input %s: %d x %d, device %s\n", input.c_str(), w, h, halconv::to_string(device));
    std::vector<Row> rows;
    const auto save = [&](const std::string &name, const Buffer<float> &result) {
        write_plane(out_dir + "/" + name + ".png", result);
    };

    halconv::PipelineOptions po;
    po.device = device;
    Buffer<uint8_t> edges(w, h);
    for (halconv::Staging s : {halconv::Staging::fused, halconv::Staging::staged}) {
        po.staging = s;
        const double ms = median_wall_ms([&] {
            halconv::detect_edges(image, edges, halconv::default_edge_threshold, po);
            edges.copy_to_host();
        });
        rows.push_back({"edges", halconv::to_string(s), "f32", ms});
    }
    Buffer<float> edge_image(w, h);
    edge_image.for_each_element([&](int x, int y) { edge_image(x, y) = edges(x, y); });
    save("edges", edge_image);

    halconv::Options o;
    o.device = device;
    o.boundary = halconv::Boundary::reflect;
    Buffer<float> out(w, h);
    const double sigma = 12.0;
    rows.push_back({"gaussian s=12", "separable", "f32", median_wall_ms([&] {
                        halconv::gaussian_blur(image, out, sigma, o);
                        out.copy_to_host();
                    })});
    save("gaussian_sigma12", out);

    const std::vector<double> g = halconv::gaussian_taps(4.0, 25);
    Buffer<float> blur_kernel(25, 25);
    blur_kernel.for_each_element([&](int x, int y) { blur_kernel(x, y) = static_cast<float>(g[x] * g[y]); });
    rows.push_back({"unsharp 25x25", gpu ? "im2tensor_fused" : "halide_cpu", "f16f32", median_wall_ms([&] {
                        halconv::unsharp_mask(image, blur_kernel, out, 1.5, po);
                        out.copy_to_host();
                    })});
    save("unsharp", out);

    // A 31x31 random kernel (uniform [0, 1), seed 7, normalized) through every algorithm.
    const int k = 31;
    Buffer<float> random_k(k, k);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    float sum = 0.0f;
    random_k.for_each_element([&](int x, int y) { sum += (random_k(x, y) = u(rng)); });
    random_k.for_each_element([&](int x, int y) { random_k(x, y) /= sum; });
    Buffer<uint16_t> image16(w, h), random16(k, k);
    image16.for_each_element([&](int x, int y) { image16(x, y) = halconv::float16_bits_from_double(image(x, y)); });
    random16.for_each_element(
        [&](int x, int y) { random16(x, y) = halconv::float16_bits_from_double(random_k(x, y)); });
    // Typed as float16 for the tensor-core algorithms (the bits were written above).
    Buffer<> image_f16(halide_type_t(halide_type_float, 16), image16.data(), w, h);
    Buffer<> random_f16(halide_type_t(halide_type_float, 16), random16.data(), k, k);
    // auto, then every algorithm of the device that takes a general kernel (the registry's).
    std::vector<Algorithm> algorithms = {Algorithm::automatic};
    for (const halconv::AlgorithmInfo &info : halconv::algorithms()) {
        if (info.max_kernel_rank == 0 &&
            std::find(info.devices.begin(), info.devices.end(), o.device) != info.devices.end()) {
            algorithms.push_back(info.algorithm);
        }
    }
    std::vector<std::string> not_run;
    for (Algorithm a : algorithms) {
        o.algorithm = a;
        const bool tc = halconv::uses_tensor_cores(a);
        o.precision = tc ? halconv::Precision::f16f32 : halconv::Precision::f32;
        double ms = 0.0;
        try {
            ms = median_wall_ms([&] {
                if (tc) {
                    halconv::correlate2d(image_f16, random_f16, out, o);
                } else {
                    halconv::correlate2d(image, random_k, out, o);
                }
                out.copy_to_host();
            });
        } catch (const halconv::Error &e) {
            // An algorithm for small kernels only (sliding: up to 7 x 7) says so and is left out.
            if (e.code() != halconv::ErrorCode::unsupported) {
                throw;
            }
            not_run.push_back(std::string(halconv::to_string(a)) + ": " + e.what());
            continue;
        }
        rows.push_back({"random 31x31", halconv::to_string(a), halconv::to_string(o.precision), ms});
        save(std::string("random31_") + halconv::to_string(a), out);
    }

    std::printf("\n%-14s %-16s %-7s %10s\n", "filter", "algorithm", "prec", "median ms");
    for (const Row &r : rows) {
        std::printf("%-14s %-16s %-7s %10.3f\n", r.filter.c_str(), r.algorithm.c_str(), r.precision.c_str(), r.ms);
    }
    std::printf("(wall time per call incl. the copy back to the host, median of 7; PNGs in %s/)\n", out_dir.c_str());
    for (const std::string &why : not_run) {
        std::printf("not run on the 31x31 kernel: %s\n", why.c_str());
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    const char *usage =
        "usage: halconv COMMAND [ARGS]   (halconv COMMAND --help for each)\n"
        "  filter IN... OUT --kernel SPEC [options]     filter PNG / FITS images\n"
        "  edges IN... OUT [--threshold T] [options]    edge detection (Gaussian, Laplacian, threshold)\n"
        "  unsharp IN... OUT --sigma S [--amount A]     unsharp mask, the blur on tensor cores\n"
        "  bilateral IN... OUT --sigma-spatial S --sigma-range R [--radius N]   bilateral filter\n"
        "  info                                         versions, devices, algorithms, compiled pipelines\n"
        "  tune [--device D] [--sizes ...]              measure every algorithm here for auto (wisdom file)\n"
        "  bench-quick [--device D]                     a small timing table\n"
        "  demo [IMAGE.png] [--out DIR] [--device D]    every filter on a photo, timings, PNGs";
    halconv::io::remove_temporaries_on_signals();
    try {
        const std::string command = argc > 1 ? argv[1] : "--help";
        const std::vector<std::string> args(argv + std::min(argc, 2), argv + argc);
        if (command == "demo") {
            return demo(args);
        }
        if (command == "filter") {
            return halconv::cli::filter_command(args);
        }
        if (command == "edges") {
            return halconv::cli::edges_command(args);
        }
        if (command == "unsharp") {
            return halconv::cli::unsharp_command(args);
        }
        if (command == "bilateral") {
            return halconv::cli::bilateral_command(args);
        }
        if (command == "info") {
            return halconv::cli::info_command(args);
        }
        if (command == "tune") {
            return halconv::cli::tune_command(args);
        }
        if (command == "bench-quick") {
            return halconv::cli::bench_quick_command(args);
        }
        if (command == "--help" || command == "-h") {
            std::puts(usage);
            return 0;
        }
        throw halconv::cli::UsageError("unknown command '" + command + "'\n" + usage);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "halconv: error: %s\n", halconv::cli::error_text(e).c_str());
        return dynamic_cast<const halconv::cli::UsageError *>(&e) != nullptr ? 2 : 1;
    }
}
