#include "peers.h"

#include <dlfcn.h>

namespace halconv::bench {

namespace {

void *open_first(std::initializer_list<const char *> names, std::string &tried) {
    for (const char *name : names) {
        if (void *h = dlopen(name, RTLD_NOW | RTLD_GLOBAL)) {
            return h;
        }
        tried += std::string(tried.empty() ? "" : ", ") + name;
    }
    return nullptr;
}

void open_npp(PeerContext &p) {
    std::string tried;
    p.npp_core = open_first({"libnppc.so.13", "libnppc.so.12", "libnppc.so"}, tried);
    p.npp_filtering = p.npp_core ? open_first({"libnppif.so.13", "libnppif.so.12", "libnppif.so"}, tried) : nullptr;
    if (p.npp_filtering == nullptr) {
        p.npp_status = "NPP not found (tried " + tried + ")";
        return;
    }
    // The _Ctx forms: NPP 13 has no others.
    p.npp_filter_32f = reinterpret_cast<NppFilter32f>(dlsym(p.npp_filtering, "nppiFilter_32f_C1R_Ctx"));
    p.npp_filter_64f = reinterpret_cast<NppFilter64f>(dlsym(p.npp_filtering, "nppiFilter_64f_C1R_Ctx"));
    if (p.npp_filter_32f == nullptr || p.npp_filter_64f == nullptr) {
        p.npp_status = "NPP found but without nppiFilter_32f_C1R_Ctx / nppiFilter_64f_C1R_Ctx";
        return;
    }
    p.npp_filter_row_32f =
        reinterpret_cast<NppFilterRowColumn32f>(dlsym(p.npp_filtering, "nppiFilterRowBorder_32f_C1R_Ctx"));
    p.npp_filter_column_32f =
        reinterpret_cast<NppFilterRowColumn32f>(dlsym(p.npp_filtering, "nppiFilterColumnBorder_32f_C1R_Ctx"));
    p.npp_gauss_advanced_32f = reinterpret_cast<NppFilterGaussAdvanced32f>(
        dlsym(p.npp_filtering, "nppiFilterGaussAdvancedBorder_32f_C1R_Ctx"));
    p.npp_bilateral_32f =
        reinterpret_cast<NppFilterBilateral32f>(dlsym(p.npp_filtering, "nppiFilterBilateralGaussBorder_32f_C1R_Ctx"));
    int device = 0;
    cudaGetDevice(&device);
    cudaDeviceProp prop{};
    cudaGetDeviceProperties(&prop, device);
    NppStreamContext &c = p.npp_context;
    c.hStream = p.stream;
    c.nCudaDeviceId = device;
    c.nMultiProcessorCount = prop.multiProcessorCount;
    c.nMaxThreadsPerMultiProcessor = prop.maxThreadsPerMultiProcessor;
    c.nMaxThreadsPerBlock = prop.maxThreadsPerBlock;
    c.nSharedMemPerBlock = prop.sharedMemPerBlock;
    c.nCudaDevAttrComputeCapabilityMajor = prop.major;
    c.nCudaDevAttrComputeCapabilityMinor = prop.minor;
    cudaStreamGetFlags(p.stream, &c.nStreamFlags);
    struct NppVersion {
        int major, minor, build;
    };
    using Version = const NppVersion *(*)();
    auto version = reinterpret_cast<Version>(dlsym(p.npp_core, "nppGetLibVersion"));
    p.npp_status = "NPP";
    if (version != nullptr) {
        const auto *v = version();
        p.npp_status +=
            " " + std::to_string(v->major) + "." + std::to_string(v->minor) + "." + std::to_string(v->build);
    }
}

}  // namespace

void PeerContextDeleter::operator()(PeerContext *p) const {
    if (p->cudnn != nullptr) {
        close_cudnn(p->cudnn);
    }
    // The NPP libraries stay loaded: unloading CUDA libraries at exit gains nothing.
    delete p;
}

std::unique_ptr<PeerContext, PeerContextDeleter> open_peers(cudaStream_t stream) {
    std::unique_ptr<PeerContext, PeerContextDeleter> p(new PeerContext);
    p->stream = stream;
    p->cudnn = open_cudnn(stream, p->cudnn_status);
    open_npp(*p);
    return p;
}

std::vector<std::string> describe_peers(const PeerContext &peers) {
    return {peers.cudnn_status, peers.npp_status};
}

}  // namespace halconv::bench
