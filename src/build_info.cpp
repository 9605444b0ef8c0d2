#include "halconv/halconv.h"
#include "halconv/version.h"
#include "halconv_build_info.h"
#include "registry.h"

namespace halconv {

BuildInfo build_info() {
    BuildInfo info;
    info.version = HALCONV_VERSION_STRING;
    info.build_id = HALCONV_BUILD_ID;
    info.halide_version = std::to_string(HALIDE_VERSION_MAJOR) + "." + std::to_string(HALIDE_VERSION_MINOR) + "." +
                          std::to_string(HALIDE_VERSION_PATCH);
    info.cpu_targets = HALCONV_CPU_TARGETS;
    info.cuda_target = HALCONV_CUDA_TARGET;
    info.cuda_architectures = HALCONV_CUDA_ARCHITECTURES;
    for (const internal::VariantRow &row : internal::variant_rows()) {
        for (int p = 0; p < 4; p++) {
            if (row.libraries[p] != nullptr) {
                info.pipelines.push_back(row.libraries[p]);
                if (row.pipelines[p].valid != nullptr) {
                    info.pipelines.push_back(std::string(row.libraries[p]) + "_valid");
                }
            }
        }
    }
    return info;
}

}  // namespace halconv
