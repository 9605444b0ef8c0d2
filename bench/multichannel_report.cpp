#include "multichannel_report.h"

#include <cudnn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>

#include "HalideBuffer.h"
#include "HalideRuntimeCuda.h"
#include "cudnn_common.h"
#include "gpu_common.h"
#include "halconv/float16.h"
#include "halconv/halconv.h"

namespace halconv::bench {

const std::vector<std::string> multichannel_columns{
    "device", "width",     "height", "channels", "filters", "k",      "variant",       "precision",
    "layout", "median_ms", "min_ms", "max_ms",   "tflops",  "status", "max_rel_error", "note"};

std::vector<MultichannelCase> default_multichannel_cases() {
    return {{1024, 1024, 64, 64, 3}, {4096, 4096, 3, 16, 7}};
}

namespace {

// One timed variant: run() queues the convolution on the stream; sample(n, x, y) reads
// one output back (after the stream is idle).
struct McVariant {
    std::string name, precision, layout;
    std::function<void()> run;
    std::function<double(int, int, int)> sample;
    std::string note;
};

// Host data (float16 values, also used as float32) and the float64 sum at a sample.
struct McData {
    MultichannelCase c;
    int ow, oh;
    std::vector<uint16_t> image;    // (c, x, y), c fastest
    std::vector<uint16_t> kernels;  // (c, i, j, n), c fastest
    double reference(int n, int x, int y) const {
        double s = 0;
        for (int j = 0; j < c.k; j++) {
            for (int i = 0; i < c.k; i++) {
                for (int ch = 0; ch < c.channels; ch++) {
                    const size_t at_k = ((size_t(n) * c.k + j) * c.k + i) * c.channels + ch;
                    const size_t at_i = ((size_t(y + j) * c.width) + (x + i)) * c.channels + ch;
                    s += double_from_float16_bits(kernels[at_k]) * double_from_float16_bits(image[at_i]);
                }
            }
        }
        return s;
    }
};

template <typename T>
T from_bits(uint16_t h) {
    if constexpr (sizeof(T) == 2) {
        return h;
    } else {
        return static_cast<T>(double_from_float16_bits(h));
    }
}

// A device copy of `values` as f16 bits or floats, reordered by `index_of` (source index
// of destination element e).
template <typename T>
void *upload(const std::vector<uint16_t> &values, const std::function<size_t(size_t)> &index_of) {
    std::vector<T> host(values.size());
    for (size_t e = 0; e < host.size(); e++) {
        host[e] = from_bits<T>(values[index_of(e)]);
    }
    void *d = nullptr;
    check_cuda(cudaMalloc(&d, host.size() * sizeof(T)), "multichannel input");
    check_cuda(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "multichannel input");
    return d;
}

double read_device(const void *base, size_t index, int bits) {
    if (bits == 16) {
        uint16_t h = 0;
        check_cuda(cudaMemcpy(&h, static_cast<const uint16_t *>(base) + index, 2, cudaMemcpyDeviceToHost), "sample");
        return double_from_float16_bits(h);
    }
    float f = 0;
    check_cuda(cudaMemcpy(&f, static_cast<const float *>(base) + index, 4, cudaMemcpyDeviceToHost), "sample");
    return f;
}

// halconv: buffers wrapping device memory of the layouts of halconv.h.
struct HalconvBuffers {
    Halide::Runtime::Buffer<> image, kernels, output;
};

HalconvBuffers halconv_buffers(const McData &d, Precision p) {
    const halide_type_t f16(halide_type_float, 16), f32(halide_type_float, 32);
    const halide_type_t storage = p == Precision::f32 ? f32 : f16;
    const halide_type_t out = p == Precision::f16 ? f16 : f32;
    HalconvBuffers b{Halide::Runtime::Buffer<>(storage, {d.c.channels, d.c.width, d.c.height}),
                     Halide::Runtime::Buffer<>(storage, {d.c.channels, d.c.k, d.c.k, d.c.filters}),
                     Halide::Runtime::Buffer<>(out, {d.c.filters, d.ow, d.oh})};
    for (auto [buf, src] : {std::pair{&b.image, &d.image}, std::pair{&b.kernels, &d.kernels}}) {
        for (size_t e = 0; e < src->size(); e++) {
            uint8_t *at = buf->raw_buffer()->host + e * storage.bytes();
            if (p == Precision::f32) {
                const float v = from_bits<float>((*src)[e]);
                std::memcpy(at, &v, 4);
            } else {
                std::memcpy(at, &(*src)[e], 2);
            }
        }
        buf->set_host_dirty();
        check_cuda(buf->copy_to_device(halide_cuda_device_interface()) == 0 ? cudaSuccess : cudaErrorUnknown,
                   "halconv input upload");
        buf->set_host_dirty(false);
    }
    check_cuda(b.output.device_malloc(halide_cuda_device_interface()) == 0 ? cudaSuccess : cudaErrorUnknown,
               "halconv output");
    return b;
}

// cuDNN with its descriptors, the best algorithm cudnnFind measures, and its workspace.
class CudnnConv {
public:
    CudnnConv(cudnnHandle_t h, const McData &d, bool nhwc, bool f16, const void *x, const void *w)
        : h_(h), x_(x), w_(w) {
        const cudnnDataType_t type = f16 ? CUDNN_DATA_HALF : CUDNN_DATA_FLOAT;
        const cudnnTensorFormat_t format = nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
        const MultichannelCase &c = d.c;
        check_cudnn(cudnnCreateTensorDescriptor(&desc_.x), "descriptor");
        check_cudnn(cudnnCreateTensorDescriptor(&desc_.y), "descriptor");
        check_cudnn(cudnnCreateFilterDescriptor(&desc_.w), "descriptor");
        check_cudnn(cudnnCreateConvolutionDescriptor(&desc_.conv), "descriptor");
        check_cudnn(cudnnSetTensor4dDescriptor(desc_.x, format, type, 1, c.channels, c.height, c.width), "x");
        check_cudnn(cudnnSetFilter4dDescriptor(desc_.w, type, format, c.filters, c.channels, c.k, c.k), "w");
        check_cudnn(cudnnSetTensor4dDescriptor(desc_.y, format, type, 1, c.filters, d.oh, d.ow), "y");
        check_cudnn(
            cudnnSetConvolution2dDescriptor(desc_.conv, 0, 0, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
            "convolution");
        // f32 without TF32 (halconv's f32 is true float32); f16 data on tensor cores.
        check_cudnn(cudnnSetConvolutionMathType(desc_.conv, f16 ? CUDNN_TENSOR_OP_MATH : CUDNN_FMA_MATH), "math");
        check_cuda(cudaMalloc(&y_, size_t(c.filters) * d.ow * d.oh * (f16 ? 2 : 4)), "cuDNN output");
        cudnnConvolutionFwdAlgoPerf_t results[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
        int returned = 0;
        check_cudnn(cudnnFindConvolutionForwardAlgorithm(h_, desc_.x, desc_.w, desc_.conv, desc_.y,
                                                         CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &returned, results),
                    "find");
        int best = -1;
        for (int i = 0; i < returned && best < 0; i++) {
            best = results[i].status == CUDNN_STATUS_SUCCESS ? i : -1;
        }
        if (best < 0) {
            throw Error(ErrorCode::invalid_argument, "cuDNN found no algorithm");
        }
        algo_ = results[best].algo;
        check_cudnn(cudnnSetConvolutionMathType(desc_.conv, results[best].mathType), "math");
        check_cudnn(cudnnGetConvolutionForwardWorkspaceSize(h_, desc_.x, desc_.w, desc_.conv, desc_.y, algo_,
                                                            &workspace_bytes_),
                    "workspace");
        if (workspace_bytes_ > 0) {
            check_cuda(cudaMalloc(&workspace_, workspace_bytes_), "cuDNN workspace");
        }
    }
    ~CudnnConv() {
        cudaFree(y_);
        cudaFree(workspace_);
    }
    void run() {
        const float one = 1.f, zero = 0.f;
        check_cudnn(cudnnConvolutionForward(h_, &one, desc_.x, x_, desc_.w, w_, desc_.conv, algo_, workspace_,
                                            workspace_bytes_, &zero, desc_.y, y_),
                    "forward");
    }
    const void *output() const { return y_; }
    std::string note() const {
        return std::string("cudnnFind best: ") + algorithm_name(algo_) + ", workspace " +
               std::to_string(workspace_bytes_) + " B";
    }

private:
    cudnnHandle_t h_;
    const void *x_, *w_;
    Descriptors desc_;
    void *y_ = nullptr, *workspace_ = nullptr;
    size_t workspace_bytes_ = 0;
    cudnnConvolutionFwdAlgo_t algo_ = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
};

}  // namespace

void multichannel_report(const std::vector<MultichannelCase> &cases, int reps, cudaStream_t stream, void *cudnn,
                         const std::string &cudnn_status, const std::string &device, Table &table,
                         const std::function<void()> &checkpoint) {
    std::mt19937_64 rng(20261122);
    std::uniform_real_distribution<double> uniform(-1.0, 1.0);
    std::printf("%-9s %3s %3s %2s  %-18s %-7s %-5s %10s %9s  %s\n", "size", "C", "N", "K", "variant", "prec", "layout",
                "median_ms", "TFLOP/s", "status");
    for (const MultichannelCase &c : cases) {
        McData d{c, c.width - c.k + 1, c.height - c.k + 1, {}, {}};
        d.image.resize(size_t(c.channels) * c.width * c.height);
        d.kernels.resize(size_t(c.channels) * c.k * c.k * c.filters);
        for (auto *v : {&d.image, &d.kernels}) {
            for (uint16_t &h : *v) {
                h = float16_bits_from_double(uniform(rng));
            }
        }
        const double flop = 2.0 * c.channels * c.k * c.k * double(c.filters) * d.ow * d.oh;
        // Spot-check positions, shared by every variant.
        std::vector<std::array<int, 3>> spots(64);
        std::vector<double> want(spots.size());
        double scale = 0;
        for (size_t s = 0; s < spots.size(); s++) {
            spots[s] = {int(rng() % c.filters), int(rng() % d.ow), int(rng() % d.oh)};
            want[s] = d.reference(spots[s][0], spots[s][1], spots[s][2]);
            scale = std::max(scale, std::fabs(want[s]));
        }

        std::vector<std::unique_ptr<HalconvBuffers>> keep;
        std::vector<std::unique_ptr<CudnnConv>> convs;
        std::vector<void *> device_copies;
        std::vector<McVariant> variants;
        const auto add_halconv = [&](MultichannelAlgorithm a, Precision p) {
            keep.push_back(std::make_unique<HalconvBuffers>(halconv_buffers(d, p)));
            HalconvBuffers *b = keep.back().get();
            MultichannelOptions o;
            o.algorithm = a;
            o.precision = p;
            o.mode = Mode::valid;
            o.device = Device::cuda;
            o.stream = stream;
            const int bits = p == Precision::f16 ? 16 : 32;
            variants.push_back({std::string("halconv_") + to_string(a), to_string(p), "NHWC",
                                [b, o] { multichannel_correlate2d(b->image, b->kernels, b->output, o); },
                                [b, bits, &d](int n, int x, int y) {
                                    return read_device(reinterpret_cast<const void *>(b->output.raw_buffer()->device),
                                                       (size_t(y) * d.ow + x) * d.c.filters + n, bits);
                                },
                                ""});
        };
        for (const Precision p : {Precision::f16, Precision::f16f32}) {
            add_halconv(MultichannelAlgorithm::implicit_gemm, p);
        }
        for (const Precision p : {Precision::f16, Precision::f16f32, Precision::f32}) {
            add_halconv(MultichannelAlgorithm::im2col, p);
        }
        for (const Precision p : {Precision::f16f32, Precision::f32}) {
            add_halconv(MultichannelAlgorithm::direct, p);
        }
        if (cudnn != nullptr) {
            for (const bool nhwc : {true, false}) {
                for (const bool f16 : {true, false}) {
                    // NCHW: image (c, y, x) and filters (n, c, j, i); output (n, y, x).
                    const auto image_src = [&](size_t e) {
                        if (nhwc) {
                            return e;
                        }
                        const size_t plane = size_t(c.width) * c.height, ch = e / plane, pix = e % plane;
                        return pix * c.channels + ch;
                    };
                    const auto kernel_src = [&](size_t e) {
                        if (nhwc) {
                            return e;
                        }
                        const size_t per = size_t(c.channels) * c.k * c.k, n = e / per, rest = e % per;
                        const size_t ch = rest / (size_t(c.k) * c.k), tap = rest % (size_t(c.k) * c.k);
                        return (n * c.k * c.k + tap) * c.channels + ch;
                    };
                    void *x = f16 ? upload<uint16_t>(d.image, image_src) : upload<float>(d.image, image_src);
                    void *w = f16 ? upload<uint16_t>(d.kernels, kernel_src) : upload<float>(d.kernels, kernel_src);
                    device_copies.push_back(x);
                    device_copies.push_back(w);
                    try {
                        convs.push_back(
                            std::make_unique<CudnnConv>(static_cast<cudnnHandle_t>(cudnn), d, nhwc, f16, x, w));
                    } catch (const std::exception &e) {
                        std::printf("cuDNN %s %s: %s\n", nhwc ? "NHWC" : "NCHW", f16 ? "f16" : "f32", e.what());
                        continue;
                    }
                    CudnnConv *conv = convs.back().get();
                    const int bits = f16 ? 16 : 32;
                    variants.push_back({"cudnn", f16 ? "f16" : "f32", nhwc ? "NHWC" : "NCHW", [conv] { conv->run(); },
                                        [conv, bits, nhwc, &d](int n, int xx, int yy) {
                                            const size_t at = nhwc ? (size_t(yy) * d.ow + xx) * d.c.filters + n
                                                                   : (size_t(n) * d.oh + yy) * d.ow + xx;
                                            return read_device(conv->output(), at, bits);
                                        },
                                        conv->note()});
                }
            }
        }

        for (McVariant &v : variants) {
            table.add_row();
            table.set("device", device);
            table.set("width", int64_t(c.width));
            table.set("height", int64_t(c.height));
            table.set("channels", int64_t(c.channels));
            table.set("filters", int64_t(c.filters));
            table.set("k", int64_t(c.k));
            table.set("variant", v.name);
            table.set("precision", v.precision);
            table.set("layout", v.layout);
            table.set("note", v.note);
            try {
                const Timing t = time_on_stream(stream, reps, v.run);
                check_cuda(cudaStreamSynchronize(stream), "variant");
                double max_rel = 0;
                for (size_t s = 0; s < spots.size(); s++) {
                    max_rel =
                        std::max(max_rel, std::fabs(v.sample(spots[s][0], spots[s][1], spots[s][2]) - want[s]) / scale);
                }
                const double bound = v.precision == "f16" ? 1e-2 : v.precision == "f16f32" ? 1e-4 : 1e-5;
                const char *status = max_rel <= bound ? "ok" : "check_failed";
                table.set("median_ms", t.median_ms);
                table.set("min_ms", t.min_ms);
                table.set("max_ms", t.max_ms);
                table.set("tflops", flop / (t.median_ms * 1e-3) / 1e12);
                table.set("status", status);
                table.set("max_rel_error", max_rel);
                std::printf("%4dx%-4d %3d %3d %2d  %-18s %-7s %-6s %10.4f %9.2f  %s (max rel err %.2e)\n", c.width,
                            c.height, c.channels, c.filters, c.k, v.name.c_str(), v.precision.c_str(), v.layout.c_str(),
                            t.median_ms, flop / (t.median_ms * 1e-3) / 1e12, status, max_rel);
            } catch (const std::exception &e) {
                table.set("status", "failed");
                table.set("note", e.what());
                std::printf("%-18s %-7s failed: %s\n", v.name.c_str(), v.precision.c_str(), e.what());
            }
            std::fflush(stdout);
        }
        if (cudnn == nullptr) {
            table.add_row();
            table.set("device", device);
            table.set("variant", "cudnn");
            table.set("status", "unsupported");
            table.set("note", cudnn_status);
        }
        convs.clear();
        for (void *p : device_copies) {
            cudaFree(p);
        }
        checkpoint();
    }
}

}  // namespace halconv::bench
