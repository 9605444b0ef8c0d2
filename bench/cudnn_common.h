// cuDNN helpers shared by the single-channel peer (peer_cudnn.cpp) and the multi-channel
// report (multichannel_report.cpp).
#pragma once

#include <cudnn.h>

#include <string>

#include "halconv/error.h"

namespace halconv::bench {

inline void check_cudnn(cudnnStatus_t s, const char *what) {
    if (s != CUDNN_STATUS_SUCCESS) {
        throw Error(ErrorCode::device, std::string("cuDNN error in ") + what + ": " + cudnnGetErrorString(s));
    }
}

inline const char *algorithm_name(cudnnConvolutionFwdAlgo_t a) {
    switch (a) {
        case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM:
            return "IMPLICIT_GEMM";
        case CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM:
            return "IMPLICIT_PRECOMP_GEMM";
        case CUDNN_CONVOLUTION_FWD_ALGO_GEMM:
            return "GEMM";
        case CUDNN_CONVOLUTION_FWD_ALGO_DIRECT:
            return "DIRECT";
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT:
            return "FFT";
        case CUDNN_CONVOLUTION_FWD_ALGO_FFT_TILING:
            return "FFT_TILING";
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD:
            return "WINOGRAD";
        case CUDNN_CONVOLUTION_FWD_ALGO_WINOGRAD_NONFUSED:
            return "WINOGRAD_NONFUSED";
        default:
            return "other";
    }
}

struct Descriptors {
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    ~Descriptors() {
        cudnnDestroyTensorDescriptor(x);
        cudnnDestroyTensorDescriptor(y);
        cudnnDestroyFilterDescriptor(w);
        cudnnDestroyConvolutionDescriptor(conv);
    }
};

}  // namespace halconv::bench
