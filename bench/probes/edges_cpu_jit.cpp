// The CPU edge pipeline JIT-compiled from its generator (generators/edges_generator.cpp)
// with a schedule of schedules/edges_schedules.cpp, timed on a random image, beside the
// memory floor of this machine: a pipeline that reads the float image and writes one byte
// per pixel (a threshold), scheduled the same way. For trying schedules without
// regenerating the library.
// Build (from the repository root, Halide from the venv):
//   H=.venv/lib/python3.11/site-packages/halide
//   g++ -O2 -std=c++20 -I$H/include -Igenerators -Ischedules -Iruntime_kernels -Iinclude \
//       bench/probes/edges_cpu_jit.cpp generators/edges_generator.cpp schedules/edges_schedules.cpp \
//       schedules/conv2d_schedules.cpp -L$H/lib64 -lHalide -Wl,-rpath,$PWD/$H/lib64 -lpthread -ldl -o edges_cpu_jit
// Run: edges_cpu_jit SCHEDULE|floor [SIZE [BOUNDARY]]   (PROFILE=1: Halide's profiler;
// TARGET=a Halide target instead of the host's; STMT=FILE writes the lowered statement, and
// with it ASM=FILE the assembly, instead of a run)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "Halide.h"

namespace {

template <typename Run>
double median_ms(Run &&run) {
    std::vector<double> t;
    for (int r = 0; r < 15; r++) {
        const auto a = std::chrono::steady_clock::now();
        run();
        const auto b = std::chrono::steady_clock::now();
        t.push_back(std::chrono::duration<double, std::milli>(b - a).count());
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

}  // namespace

int main(int argc, char **argv) {
    const std::string schedule = argc > 1 ? argv[1] : "cpu_fused";
    const int n = argc > 2 ? atoi(argv[2]) : 4096;
    const int boundary = argc > 3 ? atoi(argv[3]) : 2;
    Halide::Buffer<float> in(n, n);
    std::mt19937 rng(1);
    std::uniform_real_distribution<float> d(0.f, 1.f);
    in.for_each_value([&](float &v) { v = d(rng); });
    Halide::Buffer<uint8_t> out(n, n);
    Halide::Target target = getenv("TARGET") ? Halide::Target(getenv("TARGET")) : Halide::get_host_target();
    if (getenv("PROFILE")) {
        target = target.with_feature(Halide::Target::Profile);
    }
    if (schedule == "floor") {
        Halide::ImageParam image(Halide::Float(32), 2);
        Halide::Var x, y, yo, yi;
        Halide::Func f;
        f(x, y) = Halide::cast<uint8_t>(image(x, y) > 0.5f);
        f.split(y, yo, yi, 32).parallel(yo).vectorize(x, 64);
        f.compile_jit(target);
        image.set(in);
        const double ms = median_ms([&] { f.realize(out); });
        printf("floor %d^2: median %.2f ms (%.1f GB/s read + written)\n", n, ms, double(n) * n * 5 / ms / 1e6);
        return 0;
    }
    Halide::GeneratorContext context(target);
    auto generator = Halide::Internal::GeneratorRegistry::create("halconv_edges", context);
    generator->set_generatorparam_value("schedule", schedule);
    if (const char *stmt = getenv("STMT")) {  // the lowered statement instead of a run
        Halide::Pipeline pipeline = generator->build_pipeline();
        pipeline.compile_to_lowered_stmt(stmt, pipeline.infer_arguments(), Halide::Text, target);
        if (const char *asm_file = getenv("ASM")) {
            pipeline.compile_to_assembly(asm_file, pipeline.infer_arguments(), "edges", target);
        }
        return 0;
    }
    Halide::Callable edges = generator->compile_to_callable();
    int error = 0;
    const double ms = median_ms([&] { error |= edges(in, boundary, 0.25f, 0.02f, out); });
    if (error) {
        printf("error %d\n", error);
        return 1;
    }
    long ones = 0;
    out.for_each_value([&](uint8_t v) { ones += v; });
    printf("%s %d^2 boundary %d: median %.2f ms (%ld edge pixels)\n", schedule.c_str(), n, boundary, ms, ones);
    return 0;
}
