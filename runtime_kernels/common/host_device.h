// HALCONV_HOST_DEVICE marks the functions of the plain C++ headers that both the host (the
// registry's limits, the plans, the tests, CPU-only builds) and the CUDA kernels call, so
// that both compute one rule.
#pragma once

#if defined(__CUDACC__)
#define HALCONV_HOST_DEVICE __host__ __device__
#else
#define HALCONV_HOST_DEVICE
#endif
