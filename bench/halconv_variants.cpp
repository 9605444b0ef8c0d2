// halconv's own algorithms as benchmark variants, through the public API, and the
// registry of every variant name.
#include <algorithm>
#include <cstdint>
#include <optional>

#include "HalideRuntimeCuda.h"
#include "halconv/float16.h"
#include "variants.h"

namespace halconv::bench {

const void *Problem::image_device() const {
    return reinterpret_cast<const void *>(static_cast<uintptr_t>(image->raw_buffer()->device));
}

namespace {

// A halconv algorithm (or auto) as a benchmark variant: its plan made in setup (the
// kernel prepared, the variant chosen, the workspace sized: untimed, as a user making a
// plan once), then applied per run.
class HalconvVariant : public Variant {
public:
    explicit HalconvVariant(Algorithm algorithm) : algorithm_(algorithm) {}

    std::string unsupported(const Problem &p) const override {
        if (algorithm_ == Algorithm::automatic) {
            return {};
        }
        const AlgorithmInfo &info = algorithms()[size_t(algorithm_) - 1];
        if (std::find(info.devices.begin(), info.devices.end(), Device::cuda) == info.devices.end()) {
            return "no CUDA variant";
        }
        if (std::find(info.precisions.begin(), info.precisions.end(), p.precision) == info.precisions.end()) {
            return std::string("no ") + to_string(p.precision) + " variant";
        }
        if (info.max_kernel_rank != 0 && p.k() > info.max_kernel_rank) {
            return "needs a kernel of rank at most " + std::to_string(info.max_kernel_rank) +
                   " (the benchmark's are random: rank K)";
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
        output_ = Halide::Runtime::Buffer<>(output_type(p.precision), p.width() - p.k() + 1, p.height() - p.k() + 1);
        if (output_.device_malloc(halide_cuda_device_interface()) != 0) {
            throw Error(ErrorCode::out_of_memory, "could not allocate the output");
        }
    }

    void setup() override {
        const Problem &p = problem_;
        Options o;
        o.algorithm = algorithm_;
        o.precision = p.precision;
        o.mode = Mode::valid;
        o.device = Device::cuda;
        o.stream = p.stream;
        plan_.emplace(Extent2d{p.width(), p.height()}, kernel_, o);
    }

    void run() override { plan_->apply(*problem_.image, output_); }

    OutputView output() const override {
        return {reinterpret_cast<const void *>(static_cast<uintptr_t>(output_.raw_buffer()->device)), output_.width(),
                output_.height(), output_.width(), output_.type().bits};
    }

    // What auto chose.
    std::string note() const override {
        return algorithm_ == Algorithm::automatic && plan_ ? to_string(plan_->dispatch().algorithm) : std::string();
    }

    bool accumulates_in_storage() const override {
        return problem_.precision == Precision::f16 && !(plan_ && uses_tensor_cores(plan_->dispatch().algorithm));
    }

private:
    Algorithm algorithm_;
    Problem problem_;
    Halide::Runtime::Buffer<> kernel_, output_;
    std::optional<Plan> plan_;
};

const std::vector<std::string> peer_names{"cufft", "cudnn_best", "cudnn_implicit_gemm", "npp"};

}  // namespace

const std::vector<std::string> &all_variant_names() {
    static const std::vector<std::string> names = [] {
        std::vector<std::string> n{"auto"};
        for (const AlgorithmInfo &a : algorithms()) {
            n.push_back(a.name);
        }
        n.insert(n.end(), peer_names.begin(), peer_names.end());
        return n;
    }();
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
    if (const std::optional<Algorithm> a = algorithm_named(name)) {
        return std::make_unique<HalconvVariant>(*a);
    }
    std::string allowed;
    for (const std::string &n : all_variant_names()) {
        allowed += (allowed.empty() ? "" : ", ") + n;
    }
    throw Error(ErrorCode::invalid_argument, "unknown variant '" + name + "'; allowed: " + allowed);
}

}  // namespace halconv::bench
