// Times the CPU edge walk of edges_cpu_sliding_walk.cpp (a probe, not adopted) on a random
// image with Halide's thread pool (the library's runtime), beside the JIT-compiled
// pipeline and memory floor of edges_cpu_jit.cpp (run that in the same session).
// Build (from the repository root, after building the library in build/), with
// H=.venv/lib/python3.11/site-packages/halide:
//   g++ -O3 -std=c++20 -isystem $H/include -Iruntime_kernels bench/probes/edges_cpu_sliding.cpp
//       build/libhalconv_runtime.a -lpthread -ldl -o edges_cpu_sliding
// Run: edges_cpu_sliding [SIZE [BOUNDARY [THREADS]]]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "HalideBuffer.h"
#include "edges_cpu_sliding_walk.cpp"

int main(int argc, char **argv) {
    const int n = argc > 1 ? atoi(argv[1]) : 4096;
    const int boundary = argc > 2 ? atoi(argv[2]) : 2;
    if (argc > 3) {
        halide_set_num_threads(atoi(argv[3]));
    }
    Halide::Runtime::Buffer<float> in(n, n);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(0.f, 1.f);
    in.for_each_value([&](float &v) { v = d(rng); });
    Halide::Runtime::Buffer<uint8_t> out(n, n);
    std::vector<double> t;
    for (int r = 0; r < 15; r++) {
        const auto a = std::chrono::steady_clock::now();
        if (int e = edges_sliding_cpu(in.raw_buffer(), boundary, 0.25f, 0.02f, out.raw_buffer()); e) {
            printf("error %d\n", e);
            return 1;
        }
        const auto b = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    }
    std::sort(t.begin(), t.end());
    long ones = 0;
    out.for_each_value([&](uint8_t v) { ones += v; });
    printf("sliding %d^2 boundary %d: median %.2f ms (%ld edge pixels)\n", n, boundary, t[t.size() / 2], ones);
    return 0;
}
