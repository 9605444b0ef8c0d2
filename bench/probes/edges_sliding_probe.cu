// Stand-alone probe of the fused edge kernel (runtime_kernels/edges/edges_fused.cu):
// launched directly, checked against a float64 evaluation of the definition
// (halconv_edges.h) over every boundary, tiny, odd and offset shapes, then timed with its
// ring depth and band rows swept against the memory floor (image read, edges written).
// Build: nvcc -Iruntime_kernels -isystem <halide>/include -O3 -std=c++20 -arch=sm_90 <this> -o probe
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "edges/edges_fused.cu"
#include "probe_support.cuh"

using namespace halconv::rk;
using namespace halconv::rk::edges;

template <int R, int M = min_blocks>
void launch_with(const Args &a, int band, cudaStream_t stream = nullptr) {
    Args b = a;
    b.band_rows = band;
    const int64_t blocks_x = (int64_t(a.out_width) + warps * strip_w - 1) / (warps * strip_w);
    const int64_t bands = (int64_t(a.out_height) + band - 1) / band;
    edges_sliding_kernel<R, M><<<dim3(unsigned(blocks_x), unsigned(bands)), threads, 0, stream>>>(b);
}

// The kernel's arguments for a dense w x h image on the device and an ow x oh output of
// row pitch out_stride at image position (ox, oy); reflect, threshold 0.02.
Args image_args(const float *image, int w, int h, uint8_t *out, int out_stride, int ow, int oh, int ox, int oy) {
    Args a{};
    a.image = image;
    a.image_stride = w;
    a.image_width = w;
    a.image_height = h;
    a.out = out;
    a.out_stride = out_stride;
    a.out_width = ow;
    a.out_height = oh;
    a.base_x = ox;
    a.base_y = oy;
    a.boundary = 2;
    a.threshold = 0.02f;
    a.word_stores = out_stride % 4 == 0;
    return a;
}

// Outputs (ow x oh at (ox, oy) of a w x h image) differing from the float64 definition
// outside a band of 1e-5 around the threshold; -1 on a CUDA error.
int64_t check_case(int w, int h, int ow, int oh, int ox, int oy, int boundary, int band, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> d(0.f, 1.f);
    std::vector<float> img(size_t(w) * h);
    for (auto &v : img) v = d(rng);
    const float fill = 0.3f, threshold = 0.02f;
    const int pitch_out = ow + 3;  // odd pitch: byte stores
    float *dimg;
    uint8_t *dout;
    CK(cudaMalloc(&dimg, img.size() * 4));
    CK(cudaMalloc(&dout, size_t(pitch_out) * oh));
    CK(cudaMemcpy(dimg, img.data(), img.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0x7f, size_t(pitch_out) * oh));
    Args a = image_args(dimg, w, h, dout, pitch_out, ow, oh, ox, oy);
    a.boundary = boundary;
    a.fill = fill;
    a.threshold = threshold;
    launch_with<ring_rows>(a, band);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    std::vector<uint8_t> out(size_t(pitch_out) * oh);
    CK(cudaMemcpy(out.data(), dout, out.size(), cudaMemcpyDeviceToHost));
    cudaFree(dimg);
    cudaFree(dout);
    const double g[5] = {2.0 / 17, 4.0 / 17, 5.0 / 17, 4.0 / 17, 2.0 / 17};
    const auto sample = [&](int64_t x, int64_t y) {
        const int64_t a_ = band_source_index(x, w, boundary), b_ = band_source_index(y, h, boundary);
        return a_ < 0 || b_ < 0 ? double(fill) : double(img[size_t(b_) * w + size_t(a_)]);
    };
    const auto blur = [&](int64_t x, int64_t y) {
        double s = 0;
        for (int j = 0; j < 5; j++) {
            double r = 0;
            for (int i = 0; i < 5; i++) r += g[i] * sample(x + i - 2, y + j - 2);
            s += g[j] * r;
        }
        return s;
    };
    const auto extended_blur = [&](int64_t x, int64_t y) {
        const bool in_x = x >= 0 && x < w, in_y = y >= 0 && y < h;
        if (in_x && in_y) return blur(x, y);
        if (boundary == 0) return double(fill);
        if (boundary == 1) return blur(std::clamp<int64_t>(x, 0, w - 1), std::clamp<int64_t>(y, 0, h - 1));
        return blur(x, y);
    };
    int64_t bad = 0;
    const int64_t total = int64_t(ow) * oh;
    std::uniform_int_distribution<int64_t> pick(0, total - 1);
    const int64_t checks = std::min<int64_t>(total, 30000);
    for (int64_t n = 0; n < checks; n++) {
        const int64_t idx = total <= 30000 ? n : pick(rng);
        const int64_t x = idx % ow, y = idx / ow, gx = x + ox, gy = y + oy;
        const double lap = extended_blur(gx, gy - 1) + extended_blur(gx - 1, gy) + extended_blur(gx + 1, gy) +
                           extended_blur(gx, gy + 1) - 4 * extended_blur(gx, gy);
        const int want = std::fabs(lap) > threshold ? 1 : 0;
        const int got = out[size_t(y) * pitch_out + size_t(x)];
        if (got != want && std::fabs(std::fabs(lap) - threshold) > 1e-5) {
            if (bad < 3) {
                printf("    mismatch at (%lld, %lld): got %d want %d (|lap| %.7f)\n", (long long)x, (long long)y, got,
                       want, std::fabs(lap));
            }
            bad++;
        }
    }
    return bad;
}

template <int R, int M = min_blocks>
void time_shape(const Args &a, int band, double floor_ms) {
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    std::vector<float> ms;
    for (int rep = 0; rep < 25; rep++) {
        cudaEventRecord(e0);
        launch_with<R, M>(a, band);
        cudaEventRecord(e1);
        cudaEventSynchronize(e1);
        float t = 0;
        cudaEventElapsedTime(&t, e0, e1);
        ms.push_back(t);
    }
    CK(cudaGetLastError());
    std::sort(ms.begin(), ms.end());
    const double med = ms[ms.size() / 2];
    printf("  %dx%d ring %2d blocks %d band %3d: %.4f ms = %.2f of floor\n", a.out_width, a.out_height, R, M, band, med,
           floor_ms / med);
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
}

// The timed arguments: a w x h image of zeros on the device (reflect), its edges dense.
Args timed_args(int w, int h) {
    float *dimg;
    uint8_t *dout;
    CK(cudaMalloc(&dimg, size_t(w) * h * 4));
    CK(cudaMalloc(&dout, size_t(w) * h));
    CK(cudaMemset(dimg, 0, size_t(w) * h * 4));
    return image_args(dimg, w, h, dout, w, w, h, 0, 0);
}

// `probe profile`: one 4096^2 launch (the library's shape, 64-row bands) for Nsight Compute.
int profile() {
    const Args a = timed_args(4096, 4096);
    for (int rep = 0; rep < 3; rep++) {
        launch_with<ring_rows, min_blocks>(a, 64);
    }
    CK(cudaDeviceSynchronize());
    return 0;
}

int main(int argc, char **argv) {
    if (argc > 1 && std::string(argv[1]) == "profile") {
        return profile();
    }
    int failed = 0, cases = 0;
    const int sizes[][2] = {{1, 1},    {2, 3},    {5, 4},   {7, 7},   {129, 33},  {130, 70},
                            {300, 70}, {513, 41}, {1, 700}, {700, 1}, {257, 129}, {1030, 9}};
    for (const auto &s : sizes) {
        for (int boundary = 0; boundary < 5; boundary++) {
            for (int band : {2, 7, 32}) {
                cases++;
                const int64_t bad = check_case(s[0], s[1], s[0], s[1], 0, 0, boundary, band, 11u * s[0] + s[1]);
                if (bad != 0) {
                    failed++;
                    printf("FAIL %dx%d boundary %d band %d: %lld outputs\n", s[0], s[1], boundary, band,
                           (long long)bad);
                }
            }
        }
    }
    // Output regions inside larger images (the extern stage's general call).
    for (int boundary = 0; boundary < 5; boundary++) {
        cases += 2;
        for (const int64_t bad : {check_case(300, 200, 170, 90, 5, 100, boundary, 16, 5u),
                                  check_case(300, 200, 299, 1, 1, 199, boundary, 8, 6u)}) {
            if (bad != 0) {
                failed++;
                printf("FAIL offset region boundary %d: %lld outputs\n", boundary, (long long)bad);
            }
        }
    }
    // Large: sampled.
    for (int boundary : {0, 2}) {
        cases++;
        if (const int64_t bad = check_case(4096, 4096, 4096, 4096, 0, 0, boundary, 32, 9u); bad != 0) {
            failed++;
            printf("FAIL 4096^2 boundary %d: %lld outputs\n", boundary, (long long)bad);
        }
    }
    printf("%d cases against float64, %d failed\n", cases, failed);

    // Times: the floor is the image read and the edges written once at 3011 GB/s (the
    // H100's measured device copy bandwidth, bench/results/h100/edges/RUN.md).
    for (const auto &s : std::vector<std::pair<int, int>>{{4096, 4096}, {8192, 8192}, {3840, 2160}}) {
        const int w = s.first, h = s.second;
        Args a = timed_args(w, h);
        const double floor_ms = double(w) * h * 5 / 3011e9 * 1e3;
        const int64_t blocks_x = (int64_t(w) + warps * strip_w - 1) / (warps * strip_w);
        int per_sm = 0;
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, edges_sliding_kernel<ring_rows, min_blocks>, threads, 0);
        const int library_band = int(band_rows_for(h, blocks_x, int64_t(per_sm) * device_sm_count()));
        printf("%dx%d: floor %.4f ms, library band %d (%d blocks per SM)\n", w, h, floor_ms, library_band, per_sm);
        time_shape<ring_rows, min_blocks>(a, library_band, floor_ms);
        for (int band : {32, 64}) {
            time_shape<8, 4>(a, band, floor_ms);
            time_shape<8, 5>(a, band, floor_ms);
        }
        a.boundary = 0;
        printf(" constant:\n");
        time_shape<ring_rows, min_blocks>(a, library_band, floor_ms);
        cudaFree(const_cast<float *>(a.image));
        cudaFree(a.out);
    }
    return failed == 0 ? 0 : 1;
}
