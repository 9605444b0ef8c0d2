// halconv's own algorithms as benchmark variants, through the public API, and the
// registry of every variant name.
#include <cstdint>

#include "../src/internal.h"
#include "HalideRuntimeCuda.h"
#include "halconv/float16.h"
#include "variants.h"

namespace halconv::bench {

const void *Problem::image_device() const {
    return reinterpret_cast<const void *>(static_cast<uintptr_t>(image->raw_buffer()->device));
}

namespace {

halide_type_t storage_type(Precision p) {
    switch (p) {
        case Precision::f64:
            return halide_type_of<double>();
        case Precision::f32:
            return halide_type_of<float>();
        default:
            return halide_type_t(halide_type_float, 16);
    }
}

halide_type_t output_type(Precision p) {
    return storage_type(p == Precision::f16f32 ? Precision::f32 : p);
}

class HalconvVariant : public Variant {
public:
    HalconvVariant(Algorithm algorithm, TensorCoreShape shape) : algorithm_(algorithm), shape_(shape) {}

    std::string unsupported(const Problem &p) const override {
        if (uses_tensor_cores(algorithm_) && p.precision != Precision::f16 && p.precision != Precision::f16f32) {
            return "tensor-core algorithms take f16 or f16f32";
        }
        if (uses_tensor_cores(algorithm_) && p.k() > 128) {
            return "tensor-core algorithms take kernels up to 128 x 128";
        }
        if (algorithm_ == Algorithm::shared_tiled &&
            !internal::fits_shared_tile(p.k(), p.k(), int(p.image->type().bytes()), 0)) {
            return "the K x K apron outgrows shared_tiled's shared-memory tile";
        }
        return {};
    }

    void prepare(const Problem &p) override {
        problem_ = p;
        kernel_ = Halide::Runtime::Buffer<>(storage_type(p.precision), p.k(), p.k());
        for (int y = 0; y < p.k(); y++) {
            for (int x = 0; x < p.k(); x++) {
                const double v = p.kernel->at(x, y);
                if (kernel_.type().bits == 64) {
                    kernel_.as<double>()(x, y) = v;
                } else if (kernel_.type().bits == 32) {
                    kernel_.as<float>()(x, y) = static_cast<float>(v);
                } else {
                    kernel_.as<uint16_t>()(x, y) = float16_bits_from_double(v);
                }
            }
        }
        kernel_.set_host_dirty();
        if (kernel_.copy_to_device(halide_cuda_device_interface()) != 0) {
            throw Error("could not upload the kernel");
        }
        output_ = Halide::Runtime::Buffer<>(output_type(p.precision), p.width() - p.k() + 1, p.height() - p.k() + 1);
        if (output_.device_malloc(halide_cuda_device_interface()) != 0) {
            throw Error("could not allocate the output");
        }
    }

    void setup() override {
        const Problem &p = problem_;
        options_.algorithm = algorithm_;
        options_.tensor_core_shape = shape_;
        options_.precision = p.precision;
        options_.mode = Mode::valid;
        options_.device = Device::cuda;
        options_.stream = p.stream;
    }

    void run() override { correlate2d(*problem_.image, kernel_, output_, options_); }

    OutputView output() const override {
        return {reinterpret_cast<const void *>(static_cast<uintptr_t>(output_.raw_buffer()->device)), output_.width(),
                output_.height(), output_.width(), output_.type().bits};
    }

    bool accumulates_in_storage() const override {
        return problem_.precision == Precision::f16 && !uses_tensor_cores(algorithm_);
    }

private:
    Algorithm algorithm_;
    TensorCoreShape shape_;
    Problem problem_;
    Halide::Runtime::Buffer<> kernel_, output_;
    Options options_;
};

}  // namespace

const std::vector<std::string> &all_variant_names() {
    static const std::vector<std::string> names{
        "naive",           "shared_tiled",     "autoscheduled",       "im2tensor",
        "im2tensor_fused", "im2tensor_atomic", "diagonal_unroll",     "diagonal_unroll_m32n8k16",
        "cufft",           "cudnn_best",       "cudnn_implicit_gemm", "npp"};
    return names;
}

std::string family_of(const std::string &name) {
    if (name == "cufft") {
        return "cufft";
    }
    if (name.rfind("cudnn", 0) == 0) {
        return "cudnn";
    }
    return name == "npp" ? "npp" : "halconv";
}

std::unique_ptr<Variant> make_variant(const std::string &name, PeerContext &peers) {
    if (name == "cufft") {
        return make_cufft_variant();
    }
    if (name == "cudnn_best" || name == "cudnn_implicit_gemm") {
        return make_cudnn_variant(peers, name == "cudnn_best");
    }
    if (name == "npp") {
        return make_npp_variant(peers);
    }
    if (name == "diagonal_unroll_m32n8k16") {
        return std::make_unique<HalconvVariant>(Algorithm::diagonal_unroll, TensorCoreShape::m32n8k16);
    }
    for (Algorithm a : {Algorithm::naive, Algorithm::shared_tiled, Algorithm::autoscheduled, Algorithm::im2tensor,
                        Algorithm::im2tensor_fused, Algorithm::im2tensor_atomic, Algorithm::diagonal_unroll}) {
        if (name == to_string(a)) {
            return std::make_unique<HalconvVariant>(a, TensorCoreShape::m16n16k16);
        }
    }
    std::string allowed;
    for (const std::string &n : all_variant_names()) {
        allowed += (allowed.empty() ? "" : ", ") + n;
    }
    throw Error("unknown variant '" + name + "'; allowed: " + allowed);
}

}  // namespace halconv::bench
