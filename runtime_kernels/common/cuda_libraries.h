// cuBLAS and cuFFT, opened (dlopen) the first time something needs them instead of
// linked: a program or Python module holding halconv's CUDA pipelines then loads and runs
// with the NVIDIA driver alone, and only what is built on one of these libraries (fft on
// CUDA; multichannel im2col in float32) needs it installed. The registry's
// limits (src/limits.cpp) refuse those variants with the loader's reason where a library
// is missing, so Auto passes over them.
//
// Where a library is looked for, in order: the dynamic loader's own search for its soname
// (LD_LIBRARY_PATH, the RUNPATH of the object that calls dlopen — the Python module's points
// into NVIDIA's wheels —, ldconfig's cache), then the library folder of the CUDA toolkit
// halconv was built with.
#pragma once

#include <cublas_v2.h>
#include <cufft.h>

#include <string>

namespace halconv::rk {

// The functions halconv calls, typed by the headers it was built with.
struct CublasFunctions {
    decltype(&cublasCreate_v2) create = nullptr;
    decltype(&cublasSetStream_v2) set_stream = nullptr;
    decltype(&cublasSgemm_v2) sgemm = nullptr;
    decltype(&cublasGetStatusString) status_string = nullptr;
};
struct CufftFunctions {
    decltype(&cufftCreate) create = nullptr;
    decltype(&cufftDestroy) destroy = nullptr;
    decltype(&cufftSetAutoAllocation) set_auto_allocation = nullptr;
    decltype(&cufftMakePlanMany64) make_plan_many64 = nullptr;
    decltype(&cufftPlan2d) plan_2d = nullptr;
    decltype(&cufftSetStream) set_stream = nullptr;
    decltype(&cufftSetWorkArea) set_work_area = nullptr;
    decltype(&cufftExecR2C) exec_r2c = nullptr;
    decltype(&cufftExecC2R) exec_c2r = nullptr;
    decltype(&cufftExecD2Z) exec_d2z = nullptr;
    decltype(&cufftExecZ2D) exec_z2d = nullptr;
};

// One library as the process found it.
template <typename Functions>
struct CudaLibrary {
    const char *title = "";  // "cuBLAS"
    std::string soname;      // "libcublas.so.13", from the headers' major version
    std::string path;        // the file that was opened ("" when none)
    std::string error;       // why it is not usable ("" when it is)
    Functions functions;     // every member set when error is ""
    bool usable() const { return error.empty(); }
};

// Opened on the first call (thread-safe), then the same for the life of the process.
const CudaLibrary<CublasFunctions> &cublas_library();
const CudaLibrary<CufftFunctions> &cufft_library();

// What opening `soname` by the search above gives: a handle and the file's path, or
// nullptr and every attempt's reason in *error.
void *open_cuda_library(const std::string &soname, std::string *path, std::string *error);

}  // namespace halconv::rk
