// halconv command-line tool: `filter` (filter_command.cpp) and `demo`, which filters a
// PNG (default: the bundled cameraman) with several algorithms on the GPU when one is
// present, else on the CPU (saying so), prints a timing table and writes the results.
//   halconv demo [IMAGE.png] [--out DIR] [--device auto|cpu|cuda]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "HalideRuntimeCuda.h"
#include "filter_command.h"
#include "halconv/halconv.h"
#include "image_io.h"

namespace {

// The demo filters one channel: gray as it is, colour as Rec. 601 luma.
Halide::Runtime::Buffer<float> read_gray(const std::string &path) {
    const halconv::io::Image image = halconv::io::read_png(path);
    Halide::Runtime::Buffer<float> out(image.width, image.height);
    out.for_each_element([&](int x, int y) {
        const size_t i = size_t(y) * image.width + x;
        out(x, y) = image.channels.size() == 1
                        ? static_cast<float>(image.channels[0][i])
                        : static_cast<float>(0.299 * image.channels[0][i] + 0.587 * image.channels[1][i] +
                                             0.114 * image.channels[2][i]);
    });
    return out;
}

void write_gray(const std::string &path, const Halide::Runtime::Buffer<float> &img) {
    halconv::io::Image image;
    image.width = img.width();
    image.height = img.height();
    image.channels.assign(1, std::vector<double>(size_t(img.width()) * img.height()));
    img.for_each_element([&](int x, int y) { image.channels[0][size_t(y) * img.width() + x] = img(x, y); });
    halconv::io::write_png(path, image);
}

struct Row {
    std::string filter, algorithm;
    double ms;
};

int demo(int argc, char **argv) {
    std::string input = std::string(HALCONV_DATA_DIR) + "/cameraman.png", out_dir = "out";
    halconv::Device device = halconv::Device::automatic;
    for (int i = 0; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "--out" && i + 1 < argc) {
            out_dir = argv[++i];
        } else if (a == "--device" && i + 1 < argc) {
            const std::string d = argv[++i];
            if (d != "auto" && d != "cpu" && d != "cuda") {
                throw halconv::Error("--device " + d + ": allowed auto, cpu, cuda");
            }
            device =
                d == "cpu" ? halconv::Device::cpu : (d == "cuda" ? halconv::Device::cuda : halconv::Device::automatic);
        } else if (a == "--help" || a == "-h") {
            std::puts("usage: halconv demo [IMAGE.png] [--out DIR] [--device auto|cpu|cuda]");
            return 0;
        } else {
            input = a;
        }
    }
    if (device == halconv::Device::automatic) {
        device = halconv::cuda_available() ? halconv::Device::cuda : halconv::Device::cpu;
        if (device == halconv::Device::cpu) {
            std::puts("no CUDA device found: running on the CPU");
        }
    }
    std::filesystem::create_directories(out_dir);
    Halide::Runtime::Buffer<float> image = read_gray(input);
    std::printf("input %s: %d x %d, device %s\n", input.c_str(), image.width(), image.height(),
                halconv::to_string(device));

    // Kernels: a 31x31 Gaussian (sigma 5, rank 1) and a 15x15 random kernel (uniform [0,1), normalized).
    const int gk = 31;
    Halide::Runtime::Buffer<float> gaussian(gk, gk), random_k(15, 15);
    double gsum = 0.0;
    gaussian.for_each_element([&](int x, int y) {
        const double dx = x - 15, dy = y - 15;
        gaussian(x, y) = static_cast<float>(std::exp(-(dx * dx + dy * dy) / 50.0));
        gsum += gaussian(x, y);
    });
    gaussian.for_each_element([&](int x, int y) { gaussian(x, y) = static_cast<float>(gaussian(x, y) / gsum); });
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(0.0f, 1.0f);
    float rsum = 0.0f;
    random_k.for_each_element([&](int x, int y) { rsum += (random_k(x, y) = u(rng)); });
    random_k.for_each_element([&](int x, int y) { random_k(x, y) /= rsum; });

    std::vector<Row> rows;
    auto run = [&](const std::string &filter, Halide::Runtime::Buffer<float> &kernel, halconv::Algorithm algorithm) {
        halconv::Options o;
        o.algorithm = algorithm;
        o.device = device;
        o.boundary = halconv::Boundary::reflect;
        Halide::Runtime::Buffer<float> out(image.width(), image.height());
        std::vector<double> ms;
        halconv::Dispatch d{};
        for (int rep = 0; rep < 7; rep++) {  // first run pays JIT/upload: the median of 7 hides it
            const auto t0 = std::chrono::steady_clock::now();
            d = halconv::correlate2d(image, kernel, out, o);
            out.copy_to_host();
            ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(ms.begin(), ms.end());
        rows.push_back({filter, halconv::to_string(d.algorithm), ms[ms.size() / 2]});
        write_gray(out_dir + "/" + filter + "_" + halconv::to_string(d.algorithm) + ".png", out);
    };
    run("gaussian31", gaussian, halconv::Algorithm::automatic);
    for (halconv::Algorithm a :
         {halconv::Algorithm::naive, halconv::Algorithm::shared_tiled, halconv::Algorithm::autoscheduled}) {
        run("random15", random_k, a);
    }
    std::printf("\n%-12s %-14s %12s\n", "filter", "algorithm", "median ms");
    for (const Row &r : rows) {
        std::printf("%-12s %-14s %12.3f\n", r.filter.c_str(), r.algorithm.c_str(), r.ms);
    }
    std::printf("(wall time per call incl. copy back to host, median of 7; outputs in %s/)\n", out_dir.c_str());
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    const char *usage =
        "usage: halconv COMMAND [ARGS]   (halconv COMMAND --help for each)\n"
        "  filter IN... OUT --kernel SPEC [options]   filter PNG / FITS images\n"
        "  demo [IMAGE.png] [--out DIR] [--device auto|cpu|cuda]   timing table of the algorithms";
    try {
        const std::string command = argc > 1 ? argv[1] : "--help";
        if (command == "demo") {
            return demo(argc - 2, argv + 2);
        }
        if (command == "filter") {
            return halconv::cli::filter_command(std::vector<std::string>(argv + 2, argv + argc));
        }
        if (command == "--help" || command == "-h") {
            std::puts(usage);
            return 0;
        }
        throw halconv::cli::UsageError("unknown command '" + command + "'\n" + usage);
    } catch (const std::exception &e) {
        // halconv::Error messages carry the "halconv: " prefix already.
        const char *what = e.what();
        const size_t prefix = std::strncmp(what, "halconv: ", 9) == 0 ? 9 : 0;
        std::fprintf(stderr, "halconv: error: %s\n", what + prefix);
        return dynamic_cast<const halconv::cli::UsageError *>(&e) != nullptr ? 2 : 1;
    }
}
