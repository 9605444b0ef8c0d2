#include <sstream>

#include "halconv/halconv.h"
#include "halconv_build_info.h"

namespace halconv {

BuildInfo build_info() {
    BuildInfo info;
    info.version = HALCONV_VERSION_STRING;
    info.halide_version = std::to_string(HALIDE_VERSION_MAJOR) + "." + std::to_string(HALIDE_VERSION_MINOR) + "." +
                          std::to_string(HALIDE_VERSION_PATCH);
    info.cpu_targets = HALCONV_CPU_TARGETS;
    info.cuda_target = HALCONV_CUDA_TARGET;
    info.cuda_architectures = HALCONV_CUDA_ARCHITECTURES;
    std::istringstream names(HALCONV_PIPELINE_NAMES);
    for (std::string name; names >> name;) {
        info.pipelines.push_back(name);
    }
    return info;
}

}  // namespace halconv
