// What the probes linked against the library (build/libhalconv.a) share: a check of CUDA calls,
// the timing of an entry point's calls and their arguments' sizes. (probe_support.cuh is for probes that compile a
// kernel's .cu themselves: it stubs the library's extern-call helpers.)
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <utility>
#include <vector>

// Exits with the error and line where a CUDA call fails.
#define CK(x)                                                                          \
    do {                                                                               \
        cudaError_t e_ = (x);                                                          \
        if (e_ != cudaSuccess) {                                                       \
            std::fprintf(stderr, "CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); \
            std::exit(1);                                                              \
        }                                                                              \
    } while (0)

// Median ms per call over 11 timings of `calls` back-to-back calls each, after one untimed
// call (kernels loaded, shared-memory opt-in).
inline double time_calls(const std::function<void()> &call, int calls) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    call();
    CK(cudaDeviceSynchronize());
    std::vector<float> t;
    for (int r = 0; r < 11; r++) {
        CK(cudaEventRecord(a));
        for (int i = 0; i < calls; i++) {
            call();
        }
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        t.push_back(ms / float(calls));
    }
    std::sort(t.begin(), t.end());
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return t[t.size() / 2];
}

// "WxH,WxH,..." into pairs (sizes, or kernels kw x kh); exits with usage where one is not.
inline std::vector<std::pair<int, int>> parse_pairs(const char *s) {
    std::vector<std::pair<int, int>> pairs;
    while (*s != '\0') {
        int w = 0, h = 0, used = 0;
        if (std::sscanf(s, "%dx%d%n", &w, &h, &used) != 2 || w < 1 || h < 1) {
            std::fprintf(stderr, "sizes and kernels: WxH,WxH,...\n");
            std::exit(2);
        }
        pairs.push_back({w, h});
        s += used;
        s += *s == ',' ? 1 : 0;
    }
    return pairs;
}
