// HALCONV_HOST_DEVICE marks the functions of the plain C++ headers that both the host (the
// registry's limits, the plans, the tests, CPU-only builds) and the CUDA kernels call, so
// that both compute one rule.
#pragma once

#if defined(__CUDACC__)
#define HALCONV_HOST_DEVICE __host__ __device__
// The same for a kernel's inner loops, which must inline into it.
#define HALCONV_HOST_DEVICE_INLINE __host__ __device__ __forceinline__
#else
#define HALCONV_HOST_DEVICE
#define HALCONV_HOST_DEVICE_INLINE inline
#endif

// A loop such functions unroll on the device; host compilers, building them for the
// tests, unroll as they find best (GCC rejects the pragma).
#if defined(__CUDA_ARCH__)
#define HALCONV_UNROLL _Pragma("unroll")
#else
#define HALCONV_UNROLL
#endif
