#include "common/cuda_libraries.h"

#include <dlfcn.h>
#include <link.h>

#include <type_traits>
#include <utility>

#ifndef HALCONV_CUDA_TOOLKIT_LIBRARY_DIR
#error "HALCONV_CUDA_TOOLKIT_LIBRARY_DIR: the CUDA toolkit's library folder (CMakeLists.txt sets it)"
#endif

namespace halconv::rk {

void *open_cuda_library(const std::string &soname, std::string *path, std::string *error) {
    error->clear();
    for (const std::string &candidate : {soname, std::string(HALCONV_CUDA_TOOLKIT_LIBRARY_DIR) + "/" + soname}) {
        dlerror();
        // RTLD_LOCAL: the library's symbols stay out of the global namespace, where another
        // CUDA library version of the process (CuPy's, PyTorch's) may be.
        if (void *handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
            const link_map *map = nullptr;
            *path = dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr ? map->l_name : candidate;
            error->clear();
            return handle;
        }
        const char *why = dlerror();
        *error += (error->empty() ? "" : "; ") + std::string(why != nullptr ? why : candidate + ": not found");
    }
    path->clear();
    return nullptr;
}

namespace {

// Opens `soname` and binds each function; on any failure the library is unusable and
// `error` says why.
template <typename Functions, typename Bind>
CudaLibrary<Functions> load(const char *title, std::string soname, Bind bind) {
    CudaLibrary<Functions> library;
    library.title = title;
    library.soname = std::move(soname);
    void *handle = open_cuda_library(library.soname, &library.path, &library.error);
    if (handle == nullptr) {
        library.error = library.soname + " was not found (" + library.error + ")";
        return library;
    }
    const auto symbol = [&](auto &function, const char *name) {
        if (!library.error.empty()) {
            return;
        }
        function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(dlsym(handle, name));
        if (function == nullptr) {
            library.error = library.path + " has no function " + name + " (a version other than the " + library.soname +
                            " halconv was built with?)";
        }
    };
    bind(library.functions, symbol);
    return library;
}

}  // namespace

const CudaLibrary<CublasFunctions> &cublas_library() {
    static const CudaLibrary<CublasFunctions> library = load<CublasFunctions>(
        "cuBLAS", "libcublas.so." + std::to_string(CUBLAS_VER_MAJOR), [](CublasFunctions &f, auto symbol) {
            symbol(f.create, "cublasCreate_v2");
            symbol(f.set_stream, "cublasSetStream_v2");
            symbol(f.sgemm, "cublasSgemm_v2");
            symbol(f.status_string, "cublasGetStatusString");
        });
    return library;
}

const CudaLibrary<CufftFunctions> &cufft_library() {
    static const CudaLibrary<CufftFunctions> library = load<CufftFunctions>(
        "cuFFT", "libcufft.so." + std::to_string(CUFFT_VER_MAJOR), [](CufftFunctions &f, auto symbol) {
            symbol(f.create, "cufftCreate");
            symbol(f.destroy, "cufftDestroy");
            symbol(f.set_auto_allocation, "cufftSetAutoAllocation");
            symbol(f.make_plan_many64, "cufftMakePlanMany64");
            symbol(f.plan_2d, "cufftPlan2d");
            symbol(f.set_stream, "cufftSetStream");
            symbol(f.set_work_area, "cufftSetWorkArea");
            symbol(f.exec_r2c, "cufftExecR2C");
            symbol(f.exec_c2r, "cufftExecC2R");
            symbol(f.exec_d2z, "cufftExecD2Z");
            symbol(f.exec_z2d, "cufftExecZ2D");
        });
    return library;
}

}  // namespace halconv::rk
