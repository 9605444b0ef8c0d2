// Where the separable fft_lines passes overtake the sliding pass on CUDA: both library entry
// points (runtime_kernels/separable/halconv_sep.h) called directly on the same image and
// taps, for each precision, image size and kernel shape that both take, with the scratch
// of fft_lines from an installed workspace and the taps' tables prepared once (as a plan
// gives them), timed. The measurements the registry's crossover (separable_fft_lines_pays,
// src/limits.cpp) is set from.
// Build (after the library, build/libhalconv.a):
//   H=.venv/lib/python3.11/site-packages/halide
//   g++ -O2 -std=c++20 -Iruntime_kernels -Iinclude -isystem $H/include -I/usr/local/cuda/include \
//       bench/probes/separable_crossover_probe.cpp build/libhalconv.a -L/usr/local/cuda/lib64 \
//       -lcufft -lcublas -lcublasLt -lculibos -lcudart_static -ldl -lrt -lpthread -o .gpu/crossover_probe
// Run:   crossover_probe [same|valid [PRECISION|all [WxH,... [KWxKH,...]]]] > crossover.csv
//        (default: same, every precision, the image sizes and kernels below)
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "HalideBuffer.h"
#include "HalideRuntimeCuda.h"
#include "common/workspace_scope.h"
#include "library_probe_support.h"
#include "separable/halconv_sep.h"
#include "separable/separable_fft.h"
#include "separable/separable_sliding.h"

namespace {

using Entry = int (*)(halide_buffer_t *, halide_buffer_t *, halide_buffer_t *, int32_t, double, int32_t, int32_t, bool,
                      halide_buffer_t *);

struct Precision {
    const char *name;
    halide_type_t storage, output;
    Entry sliding, fft_lines;
};

const Precision precisions[] = {
    {"f32", halide_type_of<float>(), halide_type_of<float>(), halconv_sep_sliding_f32, halconv_sep_fft_lines_f32},
    {"f16f32", halide_type_t(halide_type_float, 16), halide_type_of<float>(), halconv_sep_sliding_f16f32,
     halconv_sep_fft_lines_f16f32},
    {"f16", halide_type_t(halide_type_float, 16), halide_type_t(halide_type_float, 16), halconv_sep_sliding_f16,
     halconv_sep_fft_lines_f16},
};

// Random samples in [0, 1) (float16 bits where the type is 16 bits wide).
Halide::Runtime::Buffer<> random_buffer(halide_type_t type, int w, int h, std::mt19937 &rng) {
    Halide::Runtime::Buffer<> b = h > 0 ? Halide::Runtime::Buffer<>(type, w, h) : Halide::Runtime::Buffer<>(type, w);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    const size_t n = b.number_of_elements();
    for (size_t i = 0; i < n; i++) {
        const float v = u(rng) / float(w);
        if (type.bits == 32) {
            static_cast<float *>(b.data())[i] = v;
        } else {
            // Round-to-nearest float16 of a value in [0, 1): exponent and top 10 mantissa bits.
            uint32_t f;
            std::memcpy(&f, &v, 4);
            const int e = int((f >> 23) & 0xff) - 127 + 15;
            static_cast<uint16_t *>(b.data())[i] = e <= 0 ? 0 : uint16_t((e << 10) | ((f >> 13) & 0x3ff));
        }
    }
    b.set_host_dirty();
    if (b.copy_to_device(halide_cuda_device_interface()) != 0) {
        std::fprintf(stderr, "copy_to_device failed\n");
        std::exit(1);
    }
    return b;
}

}  // namespace

int main(int argc, char **argv) {
    const bool valid = argc > 1 && std::string(argv[1]) == "valid";
    const std::string only = argc > 2 && std::string(argv[2]) != "all" ? argv[2] : "";
    std::mt19937 rng(20261128);
    std::vector<std::pair<int, int>> sizes{{512, 512},   {1024, 1024}, {2048, 2048},
                                           {3840, 2160}, {4096, 4096}, {8192, 8192}};
    if (argc > 3) {
        sizes = parse_pairs(argv[3]);
    }
    // Square kernels across the crossover, and lopsided ones (is kw + kh the measure?).
    std::vector<std::pair<int, int>> kernels;
    for (int k : {31, 47, 63, 79, 95, 111, 127, 143, 161, 177, 193, 209, 225}) {
        kernels.push_back({k, k});
    }
    for (auto k : {std::pair{193, 3}, std::pair{3, 193}, std::pair{193, 63}, std::pair{63, 193}, std::pair{225, 31},
                   std::pair{127, 31}}) {
        kernels.push_back(k);
    }
    if (argc > 4) {
        kernels = parse_pairs(argv[4]);
    }
    void *workspace = nullptr;
    size_t workspace_bytes = 0;
    std::printf("precision,mode,width,height,kw,kh,sliding_ms,fft_lines_ms,fft_over_sliding\n");
    for (const Precision &p : precisions) {
        if (!only.empty() && only != p.name) {
            continue;
        }
        for (auto [w, h] : sizes) {
            Halide::Runtime::Buffer<> image = random_buffer(p.storage, w, h, rng);
            for (auto [kw, kh] : kernels) {
                const int storage = p.storage.bits / 8;
                if (!halconv::rk::sep::sliding_fits(kw, kh, storage) || (valid && (kw > w || kh > h))) {
                    continue;
                }
                const int ow = valid ? w - kw + 1 : w, oh = valid ? h - kh + 1 : h;
                Halide::Runtime::Buffer<> out(p.output, ow, oh);
                if (out.device_malloc(halide_cuda_device_interface()) != 0) {
                    std::fprintf(stderr, "device_malloc failed\n");
                    return 1;
                }
                Halide::Runtime::Buffer<> row = random_buffer(p.storage, kw, 0, rng);
                Halide::Runtime::Buffer<> col = random_buffer(p.storage, kh, 0, rng);
                const auto call = [&](Entry entry) {
                    if (entry(image.raw_buffer(), row.raw_buffer(), col.raw_buffer(), 2, 0.0, valid ? 0 : kw / 2,
                              valid ? 0 : kh / 2, false, out.raw_buffer()) != 0) {
                        std::fprintf(stderr, "%s call failed\n", p.name);
                        std::exit(1);
                    }
                };
                // (1 MiB more: room for probe builds of the passes whose line lengths differ)
                const size_t need =
                    halconv::rk::sep::fft_lines_layout(ow, oh, h, kw, kh).total_bytes + (size_t(1) << 20);
                if (need > workspace_bytes) {
                    CK(cudaFree(workspace));
                    CK(cudaMalloc(&workspace, need));
                    workspace_bytes = need;
                }
                const int calls = 10;
                const double sliding = time_calls([&] { call(p.sliding); }, calls);
                double fft = 0;
                {
                    void *tables_memory = nullptr;
                    CK(cudaMalloc(&tables_memory, halconv::rk::sep::fft_lines_tables_bytes(kw, kh, ow, oh)));
                    const halconv::rk::sep::FftLinesTables tables = halconv::rk::sep::prepare_fft_lines(
                        storage, reinterpret_cast<const void *>(row.raw_buffer()->device),
                        reinterpret_cast<const void *>(col.raw_buffer()->device), kw, kh, false, 0.0, ow, oh,
                        tables_memory, nullptr);
                    CK(cudaDeviceSynchronize());
                    halconv::rk::WorkspaceScope scope(
                        halconv::rk::Workspace{workspace, workspace_bytes, nullptr, &tables});
                    fft = time_calls([&] { call(p.fft_lines); }, calls);
                    CK(cudaFree(tables_memory));
                }
                std::printf("%s,%s,%d,%d,%d,%d,%.4f,%.4f,%.3f\n", p.name, valid ? "valid" : "same", w, h, kw, kh,
                            sliding, fft, fft / sliding);
                std::fflush(stdout);
            }
        }
    }
    CK(cudaFree(workspace));
    return 0;
}
