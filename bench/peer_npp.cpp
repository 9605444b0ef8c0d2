// NPP's nppiFilter as a benchmark peer, loaded at run time (peers.cpp): float32 and
// float64 (NPP has no float16 filter). nppiFilter convolves: dst(x, y) sums
// kernel(i, j) src(x + anchor.x - i, y + anchor.y - j), reading up and left of the
// anchor. Given the kernel reversed and the anchor at (K-1, K-1), an output pixel is the
// correlation over the K x K window to its lower right, all inside the image for the
// valid region (the accuracy report confirms it against float64).
#include "peers.h"

namespace halconv::bench {

namespace {

class NppVariant : public Variant {
public:
    explicit NppVariant(PeerContext &peers) : peers_(peers) {}
    ~NppVariant() override {
        cudaFree(kernel_);
        cudaFree(output_);
    }

    std::string unsupported(const Problem &p) const override {
        if (peers_.npp_filter_32f == nullptr) {
            return peers_.npp_status;
        }
        if (p.precision != Precision::f32 && p.precision != Precision::f64) {
            return "NPP's nppiFilter takes float32 or float64 (no float16 form)";
        }
        return {};
    }

    void prepare(const Problem &p) override {
        p_ = p;
        bytes_ = p.precision == Precision::f64 ? 8 : 4;
        const int k = p.k();
        std::vector<double> reversed(size_t(k) * size_t(k));
        for (int y = 0; y < k; y++) {
            for (int x = 0; x < k; x++) {
                reversed[size_t(k - 1 - y) * size_t(k) + size_t(k - 1 - x)] = p.kernel->at(x, y);
            }
        }
        check_cuda(cudaMalloc(&kernel_, reversed.size() * bytes_), "NPP kernel");
        if (bytes_ == 8) {
            check_cuda(cudaMemcpy(kernel_, reversed.data(), reversed.size() * 8, cudaMemcpyHostToDevice), "NPP kernel");
        } else {
            const std::vector<float> f(reversed.begin(), reversed.end());
            check_cuda(cudaMemcpy(kernel_, f.data(), f.size() * 4, cudaMemcpyHostToDevice), "NPP kernel");
        }
        const int ow = p.width() - k + 1, oh = p.height() - k + 1;
        check_cuda(cudaMalloc(&output_, size_t(ow) * size_t(oh) * bytes_), "NPP output");
    }

    void setup() override {}  // nppiFilter needs nothing beyond its kernel and output

    void run() override {
        const int k = p_.k(), ow = p_.width() - k + 1, oh = p_.height() - k + 1;
        const NppSize roi{ow, oh}, size{k, k};
        const NppPoint anchor{k - 1, k - 1};
        const int src_step = p_.width() * int(bytes_), dst_step = ow * int(bytes_);
        const int status =
            bytes_ == 8 ? peers_.npp_filter_64f(static_cast<const double *>(p_.image_device()), src_step,
                                                static_cast<double *>(output_), dst_step, roi,
                                                static_cast<const double *>(kernel_), size, anchor, peers_.npp_context)
                        : peers_.npp_filter_32f(static_cast<const float *>(p_.image_device()), src_step,
                                                static_cast<float *>(output_), dst_step, roi,
                                                static_cast<const float *>(kernel_), size, anchor, peers_.npp_context);
        if (status < 0) {  // positive statuses are NPP's warnings
            throw Error(ErrorCode::device, "nppiFilter returned status " + std::to_string(status));
        }
    }

    OutputView output() const override {
        const int ow = p_.width() - p_.k() + 1;
        return {output_, ow, p_.height() - p_.k() + 1, ow, int(bytes_ * 8)};
    }

private:
    PeerContext &peers_;
    Problem p_;
    size_t bytes_ = 4;
    void *kernel_ = nullptr, *output_ = nullptr;
};

}  // namespace

std::unique_ptr<Variant> make_npp_variant(PeerContext &peers) {
    return std::make_unique<NppVariant>(peers);
}

}  // namespace halconv::bench
