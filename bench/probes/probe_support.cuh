// What the stand-alone kernel probes share: the extern-call helpers a kernel's entry point
// uses, stubbed (a probe launches its kernel directly, not through Halide), and a check of
// CUDA calls. Include it after the kernel's .cu file.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>

namespace halconv::rk {
int fail(void *, const char *, const std::string &) {
    return -1;
}
int inputs_to_device(void *, std::initializer_list<halide_buffer_t *>, halide_buffer_t *, cudaStream_t *) {
    return -1;
}
int finish_extern_call(void *, const char *, const char *, cudaError_t, halide_buffer_t *) {
    return -1;
}
int device_sm_count() {
    int d = 0, n = 0;
    cudaGetDevice(&d);
    cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, d);
    return n;
}
}  // namespace halconv::rk

// Exits with the error and line where a CUDA call fails.
#define CK(x)                                                            \
    do {                                                                 \
        cudaError_t e_ = (x);                                            \
        if (e_ != cudaSuccess) {                                         \
            printf("CUDA %s at %d\n", cudaGetErrorString(e_), __LINE__); \
            exit(1);                                                     \
        }                                                                \
    } while (0)
