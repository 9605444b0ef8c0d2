// The workspace contract of the extern stages (CUTLASS's can_implement -> workspace ->
// run), without CUDA: a caller that plans ahead (halconv::Plan) asks each stage how many
// bytes it takes for a problem (halconv_*_workspace_bytes in halconv_tc.h), allocates
// that once, and installs it on the calling thread around the pipeline call
// (WorkspaceScope); the stage carves its scratch from it (workspace.h's Scratch). Kept
// apart from workspace.h so that a CPU-only build, which has no stages, shares the layout.
#pragma once

#include <cstddef>
#include <initializer_list>

namespace halconv::rk {

class PreparedFft;  // halconv_fft.h
namespace sep {
struct FftLinesTables;  // separable/separable_fft.h
}

struct Workspace {
    void *data = nullptr;
    size_t bytes = 0;
    // The kernel's spectrum and cuFFT plans a plan prepared for the FFT stage (or none).
    PreparedFft *fft = nullptr;
    // The taps' tables a plan prepared for the separable fft_lines stage (or none).
    const sep::FftLinesTables *fft_lines = nullptr;
};

// While alive, extern stages on this thread take their scratch from `workspace`.
class WorkspaceScope {
public:
    explicit WorkspaceScope(Workspace workspace);
    ~WorkspaceScope();
    WorkspaceScope(const WorkspaceScope &) = delete;
    WorkspaceScope &operator=(const WorkspaceScope &) = delete;

private:
    Workspace previous_;
};

// The workspace installed on this thread (empty without a scope).
Workspace current_workspace();

// Every slice is aligned to this (wider than any vector load of the kernels).
inline constexpr size_t scratch_alignment = 256;

inline constexpr size_t align_scratch(size_t bytes) {
    return (bytes + scratch_alignment - 1) / scratch_alignment * scratch_alignment;
}

// Bytes a stage asking for `sizes` in that order takes of a workspace: what its
// *_workspace_bytes function reports.
inline constexpr size_t scratch_bytes(std::initializer_list<size_t> sizes) {
    size_t total = 0;
    for (size_t s : sizes) {
        total += align_scratch(s);
    }
    return total;
}

}  // namespace halconv::rk
