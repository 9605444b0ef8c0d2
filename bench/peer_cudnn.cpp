// cuDNN as a benchmark peer: one image, one channel, one filter (NCHW 1x1xHxW), cross-
// correlation, valid. Two variants: the fastest algorithm cudnnFindConvolutionForward
// measures, and IMPLICIT_GEMM (seed 000's choice). f32 runs with CUDNN_FMA_MATH (true
// float32 arithmetic, as halconv's f32 and cuFFT's; TF32 would be a different precision);
// f16 is float16 data with float32 accumulation on tensor cores; f64 is float64.
#include <cudnn.h>

#include <cstring>

#include "cudnn_common.h"
#include "halconv/float16.h"
#include "peers.h"

namespace halconv::bench {

namespace {

class CudnnVariant : public Variant {
public:
    CudnnVariant(PeerContext &peers, bool find_best) : peers_(peers), find_best_(find_best) {}
    ~CudnnVariant() override {
        cudaFree(kernel_);
        cudaFree(output_);
        cudaFree(workspace_);
    }

    std::string unsupported(const Problem &p) const override {
        if (peers_.cudnn == nullptr) {
            return peers_.cudnn_status;
        }
        if (p.precision == Precision::f16f32) {
            return "cuDNN convolutions take and give one data type (no float16-in, float32-out form)";
        }
        return {};
    }

    void prepare(const Problem &p) override {
        p_ = p;
        bytes_ = p.precision == Precision::f64 ? 8 : p.precision == Precision::f32 ? 4 : 2;
        const int k = p.k();
        std::vector<unsigned char> host(size_t(k) * size_t(k) * bytes_);
        for (int y = 0; y < k; y++) {
            for (int x = 0; x < k; x++) {
                unsigned char *at = &host[(size_t(y) * size_t(k) + size_t(x)) * bytes_];
                const double v = p.kernel->at(x, y);
                if (bytes_ == 8) {
                    std::memcpy(at, &v, 8);
                } else if (bytes_ == 4) {
                    const float f = float(v);
                    std::memcpy(at, &f, 4);
                } else {
                    const uint16_t h = float16_bits_from_double(v);
                    std::memcpy(at, &h, 2);
                }
            }
        }
        check_cuda(cudaMalloc(&kernel_, host.size()), "cuDNN filter");
        check_cuda(cudaMemcpy(kernel_, host.data(), host.size(), cudaMemcpyHostToDevice), "cuDNN filter");
        check_cuda(cudaMalloc(&output_, size_t(p.width() - k + 1) * size_t(p.height() - k + 1) * bytes_),
                   "cuDNN output");
    }

    void setup() override {
        const Problem &p = p_;
        auto handle = static_cast<cudnnHandle_t>(peers_.cudnn);
        const cudnnDataType_t data = p.precision == Precision::f64   ? CUDNN_DATA_DOUBLE
                                     : p.precision == Precision::f32 ? CUDNN_DATA_FLOAT
                                                                     : CUDNN_DATA_HALF;
        const cudnnDataType_t compute = p.precision == Precision::f64 ? CUDNN_DATA_DOUBLE : CUDNN_DATA_FLOAT;
        const int k = p.k(), ow = p.width() - k + 1, oh = p.height() - k + 1;
        check_cudnn(cudnnCreateTensorDescriptor(&d_.x), "descriptor");
        check_cudnn(cudnnCreateTensorDescriptor(&d_.y), "descriptor");
        check_cudnn(cudnnCreateFilterDescriptor(&d_.w), "descriptor");
        check_cudnn(cudnnCreateConvolutionDescriptor(&d_.conv), "descriptor");
        check_cudnn(cudnnSetTensor4dDescriptor(d_.x, CUDNN_TENSOR_NCHW, data, 1, 1, p.height(), p.width()), "x");
        check_cudnn(cudnnSetFilter4dDescriptor(d_.w, data, CUDNN_TENSOR_NCHW, 1, 1, k, k), "w");
        check_cudnn(cudnnSetConvolution2dDescriptor(d_.conv, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, compute),
                    "convolution");
        check_cudnn(cudnnSetConvolutionMathType(d_.conv, p.precision == Precision::f16   ? CUDNN_TENSOR_OP_MATH
                                                         : p.precision == Precision::f32 ? CUDNN_FMA_MATH
                                                                                         : CUDNN_DEFAULT_MATH),
                    "math type");
        check_cudnn(cudnnSetTensor4dDescriptor(d_.y, CUDNN_TENSOR_NCHW, data, 1, 1, oh, ow), "y");

        if (find_best_) {
            cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
            int returned = 0;
            check_cudnn(cudnnFindConvolutionForwardAlgorithm(handle, d_.x, d_.w, d_.conv, d_.y,
                                                             CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, results),
                        "find");
            int best = -1;
            for (int i = 0; i < returned && best < 0; i++) {
                if (results[i].status == CUDNN_STATUS_SUCCESS) {
                    best = i;
                }
            }
            if (best < 0) {
                throw Error(ErrorCode::device, "cuDNN found no algorithm for this convolution");
            }
            algorithm_ = results[best].algo;
            check_cudnn(cudnnSetConvolutionMathType(d_.conv, results[best].mathType), "math type");
        } else {
            algorithm_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
        }
        check_cudnn(
            cudnnGetConvolutionForwardWorkspaceSize(handle, d_.x, d_.w, d_.conv, d_.y, algorithm_, &workspace_bytes_),
            "workspace size");
        if (workspace_bytes_ > 0) {
            check_cuda(cudaMalloc(&workspace_, workspace_bytes_), "cuDNN workspace");
        }
    }

    void run() override {
        const double one = 1.0, zero = 0.0;
        const float onef = 1.0f, zerof = 0.0f;
        const bool dbl = p_.precision == Precision::f64;
        check_cudnn(cudnnConvolutionForward(static_cast<cudnnHandle_t>(peers_.cudnn),
                                            dbl ? static_cast<const void *>(&one) : &onef, d_.x, p_.image_device(),
                                            d_.w, kernel_, d_.conv, algorithm_, workspace_, workspace_bytes_,
                                            dbl ? static_cast<const void *>(&zero) : &zerof, d_.y, output_),
                    "forward");
    }

    OutputView output() const override {
        const int ow = p_.width() - p_.k() + 1;
        return {output_, ow, p_.height() - p_.k() + 1, ow, int(bytes_ * 8)};
    }

    std::string note() const override {
        return std::string(find_best_ ? "cudnnFind best: " : "") + algorithm_name(algorithm_) + ", workspace " +
               std::to_string(workspace_bytes_) + " B";
    }

private:
    PeerContext &peers_;
    bool find_best_;
    Problem p_;
    Descriptors d_;
    size_t bytes_ = 4, workspace_bytes_ = 0;
    void *kernel_ = nullptr, *output_ = nullptr, *workspace_ = nullptr;
    cudnnConvolutionFwdAlgo_t algorithm_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
};

}  // namespace

void *open_cudnn(cudaStream_t stream, std::string &status) {
    cudnnHandle_t handle = nullptr;
    if (cudnnStatus_t s = cudnnCreate(&handle); s != CUDNN_STATUS_SUCCESS) {
        status = std::string("cuDNN unusable: ") + cudnnGetErrorString(s);
        return nullptr;
    }
    if (cudnnStatus_t s = cudnnSetStream(handle, stream); s != CUDNN_STATUS_SUCCESS) {
        status = std::string("cuDNN unusable: ") + cudnnGetErrorString(s);
        cudnnDestroy(handle);
        return nullptr;
    }
    const size_t v = cudnnGetVersion();
    status = "cuDNN " + std::to_string(v / 10000) + "." + std::to_string(v / 100 % 100) + "." + std::to_string(v % 100);
    return handle;
}

void close_cudnn(void *handle) {
    cudnnDestroy(static_cast<cudnnHandle_t>(handle));
}

std::unique_ptr<Variant> make_cudnn_variant(PeerContext &peers, bool find_best) {
    return std::make_unique<CudnnVariant>(peers, find_best);
}

}  // namespace halconv::bench
