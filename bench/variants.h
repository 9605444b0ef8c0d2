// The implementations the benchmark compares, behind one interface: halconv's own
// algorithms and the peers linked directly (cuFFT, cuDNN) or loaded at run time (NPP).
// Every variant computes the same thing: the valid correlation of an image with a
// K x K kernel, data resident on the GPU.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench_core.h"
#include "gpu_common.h"
#include "halconv/halconv.h"

namespace halconv::bench {

// One problem: the image already on the device in the precision's storage type, the
// kernel as float64 values (each variant converts and uploads it in prepare, untimed).
struct Problem {
    Precision precision = Precision::f32;
    Halide::Runtime::Buffer<> *image = nullptr;  // dense, device-resident
    const Plane *kernel = nullptr;
    cudaStream_t stream = nullptr;

    int width() const { return image->width(); }
    int height() const { return image->height(); }
    int k() const { return kernel->width; }
    const void *image_device() const;  // raw device pointer of `image`
};

// Libraries shared by the peer variants, opened once per run.
struct PeerContext;
struct PeerContextDeleter {
    void operator()(PeerContext *) const;
};
std::unique_ptr<PeerContext, PeerContextDeleter> open_peers(cudaStream_t stream);
// What the run has: "cuDNN 9.x", "NPP 13.x" or why a peer is missing.
std::vector<std::string> describe_peers(const PeerContext &peers);

class Variant {
public:
    virtual ~Variant() = default;
    // Why it cannot run this problem (precision, size), or empty.
    virtual std::string unsupported(const Problem &problem) const = 0;
    // The kernel's upload and the valid-size output's allocation (what any method
    // needs: not counted as extra memory). Untimed.
    virtual void prepare(const Problem &problem) = 0;
    // Plans, kernel transforms, workspaces, buffers of the method's own: untimed, and
    // what the memory probe counts (with the first run).
    virtual void setup() = 0;
    // Queues the timed work on problem.stream.
    virtual void run() = 0;
    virtual OutputView output() const = 0;
    // What the run chose (cuDNN's algorithm, cuFFT's padding...), for the CSV.
    virtual std::string note() const { return {}; }
    // True where arithmetic is done in the storage precision itself (halconv's f16
    // CUDA-core pipelines): their spot-check bound is wider.
    virtual bool accumulates_in_storage() const { return false; }
};

// Names: auto and every algorithm of the registry (halconv::algorithms(): naive,
// shared_tiled, ..., im2tensor_fused, ...); cufft, cudnn_best, cudnn_implicit_gemm,
// npp (peers). Throws halconv::Error for others.
std::unique_ptr<Variant> make_variant(const std::string &name, PeerContext &peers);
const std::vector<std::string> &all_variant_names();
// "halconv", "cufft", "cudnn" or "npp".
std::string family_of(const std::string &name);

// Peer factories (one file each).
std::unique_ptr<Variant> make_cufft_variant();
std::unique_ptr<Variant> make_cudnn_variant(PeerContext &peers, bool find_best);
std::unique_ptr<Variant> make_npp_variant(PeerContext &peers);

}  // namespace halconv::bench
