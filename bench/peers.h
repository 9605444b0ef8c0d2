// The peer libraries a benchmark run has, opened once (peers.cpp) and shared by the
// peer variants.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "variants.h"

namespace halconv::bench {

// NPP is loaded at run time (the build machine need not have it): the few types of
// nppdefs.h its filter takes, declared as NPP 13 lays them out.
struct NppSize {
    int width, height;
};
struct NppPoint {
    int x, y;
};
struct NppStreamContext {
    cudaStream_t hStream;
    int nCudaDeviceId;
    int nMultiProcessorCount;
    int nMaxThreadsPerMultiProcessor;
    int nMaxThreadsPerBlock;
    size_t nSharedMemPerBlock;
    int nCudaDevAttrComputeCapabilityMajor;
    int nCudaDevAttrComputeCapabilityMinor;
    unsigned int nStreamFlags;
    int nReserved0;
};
using NppFilter32f = int (*)(const float *, int, float *, int, NppSize, const float *, NppSize, NppPoint,
                             NppStreamContext);
using NppFilter64f = int (*)(const double *, int, double *, int, NppSize, const double *, NppSize, NppPoint,
                             NppStreamContext);

// NPP's separable filters (float32, the _Ctx forms): a row or column pass with the
// taps stored reversed, the anchor counted from the first, and NPP_BORDER_REPLICATE
// (halconv's nearest) the only border they take; and its Gaussian of any tap count.
inline constexpr int npp_border_replicate = 2;
using NppFilterRowColumn32f = int (*)(const float *, int, NppSize, NppPoint, float *, int, NppSize, const float *, int,
                                      int, int, NppStreamContext);
using NppFilterGaussAdvanced32f = int (*)(const float *, int, NppSize, NppPoint, float *, int, NppSize, int,
                                          const float *, int, NppStreamContext);
// nppiFilterBilateralGaussBorder_32f_C1R_Ctx: (src, step, size, offset, dst, step, roi, radius,
// step between source pixels, value sigma^2, position sigma^2, border, context).
using NppFilterBilateral32f = int (*)(const float *, int, NppSize, NppPoint, float *, int, NppSize, int, int, float,
                                      float, int, NppStreamContext);

struct PeerContext {
    cudaStream_t stream = nullptr;
    void *cudnn = nullptr;  // cudnnHandle_t; null when cuDNN is missing
    std::string cudnn_status;
    void *npp_core = nullptr, *npp_filtering = nullptr;  // dlopen handles
    NppFilter32f npp_filter_32f = nullptr;
    NppFilter64f npp_filter_64f = nullptr;
    NppFilterRowColumn32f npp_filter_row_32f = nullptr, npp_filter_column_32f = nullptr;  // null where missing
    NppFilterGaussAdvanced32f npp_gauss_advanced_32f = nullptr;
    NppFilterBilateral32f npp_bilateral_32f = nullptr;
    NppStreamContext npp_context{};
    std::string npp_status;
};

// cuDNN's half (peer_cudnn.cpp), so peers.cpp needs no cuDNN header.
void *open_cudnn(cudaStream_t stream, std::string &status);
void close_cudnn(void *handle);

}  // namespace halconv::bench
