// The CUDA runtime's failures as halconv::Error, for the CUDA-only files of src/
// (cuda_runtime.cpp, workspace_pool_cuda.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "halconv/error.h"

namespace halconv::internal {

// Throws Error (out_of_memory for an allocation failure, device otherwise) naming `what`
// when `e` is a failure, after clearing it: it is reported, not left for the next call.
inline void check_cuda(cudaError_t e, const char *what) {
    if (e != cudaSuccess) {
        cudaGetLastError();
        throw Error(e == cudaErrorMemoryAllocation ? ErrorCode::out_of_memory : ErrorCode::device,
                    std::string(what) + ": " + cudaGetErrorString(e));
    }
}

}  // namespace halconv::internal
