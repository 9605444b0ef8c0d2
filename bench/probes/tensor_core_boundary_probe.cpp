// What the boundary rule costs the tensor-core separable passes: the entry point
// (runtime_kernels/separable/halconv_sep.h) called directly on the same image and Gaussian-like
// taps in mode same under each rule, and in mode valid (no sample outside the image, so the
// producer copies every column by TMA), timed with the intermediate from an installed
// workspace. Mode same stages (K - 1) / 2 columns a line end through the rule sample by sample
// (separable_tensor_core_sm90.cu, produce); valid has (K - 1)^2 fewer outputs, so the figures
// are also given per output.
// Build (after the library, build/libhalconv.a):
//   H=.venv/lib/python3.11/site-packages/halide
//   g++ -O2 -std=c++20 -Iruntime_kernels -Iinclude -isystem $H/include -I/usr/local/cuda/include \
//       bench/probes/tensor_core_boundary_probe.cpp build/libhalconv.a -L/usr/local/cuda/lib64 \
//       -lcufft -lcublas -lcublasLt -lculibos -lcudart_static -ldl -lrt -lpthread -o .gpu/tensor_core_boundary_probe
// Run:   tensor_core_boundary_probe [WxH,... [K,...]] > boundary.csv   (an sm_90 device)
#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "HalideBuffer.h"
#include "HalideRuntimeCuda.h"
#include "common/workspace_scope.h"
#include "library_probe_support.h"
#include "separable/halconv_sep.h"
#include "separable/separable_tensor_core.h"

namespace {

Halide::Runtime::Buffer<float> on_device(Halide::Runtime::Buffer<float> b) {
    b.set_host_dirty();
    if (b.copy_to_device(halide_cuda_device_interface()) != 0) {
        std::fprintf(stderr, "copy_to_device failed\n");
        std::exit(1);
    }
    return b;
}

std::vector<int> ints(const char *s) {
    std::vector<int> v;
    for (const char *p = s; *p != '\0';) {
        char *end = nullptr;
        v.push_back(int(std::strtol(p, &end, 10)));
        p = *end == ',' ? end + 1 : end;
    }
    return v;
}

}  // namespace

int main(int argc, char **argv) {
    const std::vector<std::pair<int, int>> sizes =
        argc > 1 ? parse_pairs(argv[1]) : std::vector<std::pair<int, int>>{{4096, 4096}, {8192, 8192}, {3840, 2160}};
    const std::vector<int> ks = argc > 2 ? ints(argv[2]) : std::vector<int>{63, 121, 193};
    const char *rules[] = {"constant", "nearest", "reflect", "mirror", "wrap"};
    std::mt19937 rng(20261129);
    std::uniform_real_distribution<float> u(0.f, 1.f);
    std::printf("width,height,k,mode,rule,ms,ns_per_kilo_output\n");
    for (auto [w, h] : sizes) {
        Halide::Runtime::Buffer<float> host(w, h);
        host.for_each_value([&](float &v) { v = u(rng); });
        Halide::Runtime::Buffer<float> image = on_device(host);
        for (int k : ks) {
            Halide::Runtime::Buffer<float> taps(k);
            for (int i = 0; i < k; i++) {
                const double d = (i - (k - 1) / 2.0) / (k / 6.0);
                taps(i) = float(std::exp(-d * d / 2));
            }
            taps = on_device(taps);
            for (const bool valid : {false, true}) {
                const int ow = valid ? w - k + 1 : w, oh = valid ? h - k + 1 : h;
                Halide::Runtime::Buffer<float> out(ow, oh);
                if (out.device_malloc(halide_cuda_device_interface()) != 0) {
                    std::fprintf(stderr, "device_malloc failed\n");
                    return 1;
                }
                const size_t bytes = halconv::rk::sep::tensor_core_workspace_bytes(ow, h);
                void *workspace = nullptr;
                CK(cudaMalloc(&workspace, bytes));
                halconv::rk::WorkspaceScope scope(halconv::rk::Workspace{workspace, bytes});
                for (int rule = 0; rule < (valid ? 1 : 5); rule++) {
                    const double ms = time_calls(
                        [&] {
                            if (halconv_sep_tensor_core_f32(image.raw_buffer(), taps.raw_buffer(), taps.raw_buffer(),
                                                            rule, 0.5, valid ? 0 : k / 2, valid ? 0 : k / 2, false,
                                                            out.raw_buffer()) != 0) {
                                std::fprintf(stderr, "the call failed (an sm_90 device?)\n");
                                std::exit(1);
                            }
                        },
                        10);
                    std::printf("%d,%d,%d,%s,%s,%.4f,%.3f\n", w, h, k, valid ? "valid" : "same",
                                valid ? "-" : rules[rule], ms, ms * 1e6 / (double(ow) * oh / 1e3));
                    std::fflush(stdout);
                }
                CK(cudaFree(workspace));
            }
        }
    }
    return 0;
}
