// Stand-alone probe of the sliding direct kernel (runtime_kernels/conv2d/): launched
// directly, checked against float64 sums over every boundary, mode, flip and kernel shape
// up to 7 x 7 (and a batch), then timed with its shape parameters swept.
// Build: nvcc -Iruntime_kernels -isystem <halide>/include -O3 -std=c++20 -arch=sm_90 <this> -o probe
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "conv2d/conv2d_sliding.cu"
#include "probe_support.cuh"

using namespace halconv::rk;
using namespace halconv::rk::conv2d;

struct Case {
    int w, h, kw, kh, ow, oh, ox, oy, boundary, images;
    bool flip;
};

bool register_check = false;

// Max |error| / sum |terms| over the outputs (all when few, else a sample).
double check_case(const Case &c) {
    std::mt19937 rng(c.w * 131 + c.kw * 7 + c.kh);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    const size_t plane = size_t(c.w) * c.h, oplane = size_t(c.ow) * c.oh;
    std::vector<float> img(plane * c.images), k(size_t(c.kw) * c.kh);
    for (auto &v : img) v = d(rng);
    for (auto &v : k) v = d(rng);
    float *dimg, *dout, *dk;
    CK(cudaMalloc(&dimg, img.size() * 4));
    CK(cudaMalloc(&dout, oplane * c.images * 4));
    CK(cudaMalloc(&dk, k.size() * 4));
    CK(cudaMemcpy(dimg, img.data(), img.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dk, k.data(), k.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0xff, oplane * c.images * 4));
    SlidingArgs<float> p{};
    p.image = dimg;
    p.image_stride = c.w;
    p.image_plane = plane;
    p.image_width = c.w;
    p.image_height = c.h;
    p.out = dout;
    p.out_stride = c.ow;
    p.out_plane = oplane;
    p.out_width = c.ow;
    p.out_height = c.oh;
    p.taps = dk;
    p.taps_stride = c.kw;
    p.kw = c.kw;
    p.kh = c.kh;
    p.flip = c.flip;
    p.boundary = c.boundary;
    p.fill = 0.25f;
    p.base_x = -c.ox;
    p.base_y = -c.oy;
    if (register_check) {  // the form float16 samples take, on float32 samples
        p.band_rows = 16;
        const dim3 grid(unsigned((c.ow + 255) / 256), unsigned((c.oh + 15) / 16), unsigned(c.images));
        if (c.kw == 3 && c.kh == 3) {
            conv2d_sliding_kernel<float, float, float, 3, true, 2, 2, 8><<<grid, 128>>>(p);
        } else {
            conv2d_sliding_kernel<float, float, float, 7, false, 2, 4, 1><<<grid, 128>>>(p);
        }
        CK(cudaGetLastError());
    } else {
        CK((launch<float, float, float>(p, c.images, nullptr)));
    }
    CK(cudaDeviceSynchronize());
    std::vector<float> out(oplane * c.images);
    CK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
    const int64_t total = int64_t(oplane) * c.images;
    const int checks = int(std::min<int64_t>(total, 20000));
    std::uniform_int_distribution<int64_t> pick(0, total - 1);
    double worst = 0;
    for (int n = 0; n < checks; n++) {
        const int64_t idx = total <= 20000 ? n : pick(rng);
        const int64_t im = idx / int64_t(oplane), x = idx % int64_t(oplane) % c.ow, y = idx % int64_t(oplane) / c.ow;
        double s = 0, m = 0;
        for (int j = 0; j < c.kh; j++) {
            for (int i = 0; i < c.kw; i++) {
                const int64_t a = band_source_index(x + i - c.ox, c.w, c.boundary);
                const int64_t b = band_source_index(y + j - c.oy, c.h, c.boundary);
                const double v = a < 0 || b < 0 ? 0.25 : img[size_t(im) * plane + size_t(b) * c.w + size_t(a)];
                const double t = k[size_t(c.flip ? c.kh - 1 - j : j) * c.kw + size_t(c.flip ? c.kw - 1 - i : i)];
                s += t * v;
                m += std::fabs(t * v);
            }
        }
        const double err = std::fabs(double(out[size_t(idx)]) - s) / std::max(m, 1e-30);
        if (!(err <= 1e300)) {
            worst = 1e9;
            break;
        }
        worst = std::max(worst, err);
    }
    cudaFree(dimg);
    cudaFree(dout);
    cudaFree(dk);
    return worst;
}

// The timed arguments: a w x h x images f32 image, a k x k kernel, same mode, reflect.
SlidingArgs<float> timed_args(const float *dimg, float *dout, const float *dk, int w, int h, int k, int band) {
    SlidingArgs<float> p{};
    p.image = dimg;
    p.image_stride = w;
    p.image_plane = int64_t(w) * h;
    p.image_width = w;
    p.image_height = h;
    p.out = dout;
    p.out_stride = w;
    p.out_plane = int64_t(w) * h;
    p.out_width = w;
    p.out_height = h;
    p.taps = dk;
    p.taps_stride = k;
    p.kw = k;
    p.kh = k;
    p.flip = false;
    p.boundary = 2;
    p.fill = 0;
    p.base_x = -(k - 1) / 2;
    p.base_y = -(k - 1) / 2;
    p.band_rows = band;
    return p;
}

// Median of 25 launches (after 5) of `kernel` with C columns per thread, by CUDA events.
template <typename Kernel>
float median_ms(Kernel kernel, const SlidingArgs<float> &p, int columns, int images) {
    const dim3 grid(unsigned((p.out_width + 128 * columns - 1) / (128 * columns)),
                    unsigned((p.out_height + p.band_rows - 1) / p.band_rows), unsigned(images));
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<float> t;
    for (int r = 0; r < 30; r++) {
        cudaEventRecord(a);
        kernel<<<grid, 128>>>(p);
        cudaEventRecord(b);
        CK(cudaEventSynchronize(b));
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        if (r >= 5) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// One kernel over band heights: time, occupancy, registers, fraction of the floor.
template <typename Kernel>
void sweep_kernel(Kernel kernel, const char *form, int columns, int ahead, const float *dimg, float *dout,
                  const float *dk, int w, int h, int images, int k, bool exact, double floor_ms) {
    int per_sm = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, 128, 0);
    cudaFuncAttributes attr{};
    cudaFuncGetAttributes(&attr, kernel);
    for (int band : {2, 4, 8, 16, 32}) {
        const float ms = median_ms(kernel, timed_args(dimg, dout, dk, w, h, k, band), columns, images);
        printf("  %dx%dx%d K=%d%s %s C=%d ahead=%d regs %d smem %zu blocks/SM %d band %4d: %.4f ms = %.2f of floor\n",
               w, h, images, k, exact ? "" : " (general)", form, columns, ahead, attr.numRegs, attr.sharedSizeBytes,
               per_sm, band, ms, floor_ms / ms);
    }
}

template <int B, bool E, int C, int R>
void sweep_staged(const float *dimg, float *dout, const float *dk, int w, int h, int images, int k, double floor_ms) {
    sweep_kernel(conv2d_staged_kernel<float, float, float, B, E, C, R>, "staged", C, R, dimg, dout, dk, w, h, images, k,
                 E, floor_ms);
}

template <int B, bool E, int C, int P, int M = 1>
void sweep(const float *dimg, float *dout, const float *dk, int w, int h, int images, int k, double floor_ms) {
    sweep_kernel(conv2d_sliding_kernel<float, float, float, B, E, C, P, M>, "registers", C, P, dimg, dout, dk, w, h,
                 images, k, E, floor_ms);
}

// the boundaries and flips in turn, a batch of 4 images every 7th case; returns failures.
int check_all(int *cases) {
    int bad = 0;
    const int sizes[][2] = {{333, 517}, {64, 32}, {45, 40}, {1, 300}, {300, 1}, {1000, 70}, {2, 3}, {257, 255}};
    for (int kw = 1; kw <= 7; kw++) {
        for (int kh = 1; kh <= 7; kh++) {
            for (auto &s : sizes) {
                for (int mode = 0; mode < 3; mode++) {
                    const int n = (*cases)++;
                    Case c{s[0], s[1], kw, kh, 0, 0, 0, 0, n % 5, 1 + (n % 7 == 0 ? 3 : 0), n % 2 == 1};
                    if (mode == 0) {
                        c.ow = s[0];
                        c.oh = s[1];
                        c.ox = (kw - 1) / 2;
                        c.oy = (kh - 1) / 2;
                    } else if (mode == 1) {
                        c.ow = s[0] - kw + 1;
                        c.oh = s[1] - kh + 1;
                        if (c.ow < 1 || c.oh < 1) continue;
                    } else {
                        c.ow = s[0] + kw - 1;
                        c.oh = s[1] + kh - 1;
                        c.ox = kw - 1;
                        c.oy = kh - 1;
                    }
                    const double e = check_case(c);
                    if (!(e <= (kw * kh + 4) * 6e-8)) {
                        bad++;
                        printf("FAIL %dx%dx%d K %dx%d mode %d boundary %d flip %d: %.3g\n", c.w, c.h, c.images, kw, kh,
                               mode, c.boundary, int(c.flip), e);
                    }
                }
            }
        }
    }
    return bad;
}

int main(int argc, char **argv) {
    if (argc > 1) {  // one launch of the f32 3 x 3 kernel, for a profiler
        float *da, *db, *dk;
        CK(cudaMalloc(&da, 4096 * 4096 * 4));
        CK(cudaMalloc(&db, 4096 * 4096 * 4));
        CK(cudaMalloc(&dk, 64 * 4));
        CK(cudaMemset(da, 0, 4096 * 4096 * 4));
        CK(cudaMemset(dk, 0, 64 * 4));
        sweep_staged<3, true, 4, 6>(da, db, dk, 4096, 4096, 1, 3, 0.0456);
        return 0;
    }
    int bad = 0, n = 0;
    for (bool in_registers : {false, true}) {
        register_check = in_registers;
        bad += check_all(&n);
    }
    printf("%d cases (the library's launch, then the register form on float32), %d failed\n", n, bad);

    // Copy bandwidth: the floor's rate.
    const size_t big = size_t(8192) * 8192;
    float *da, *db, *dk;
    CK(cudaMalloc(&da, big * 4));
    CK(cudaMalloc(&db, big * 4));
    CK(cudaMalloc(&dk, 64 * 4));
    {  // random samples and taps: zeros run faster (the memory system's own doing)
        std::vector<float> host(big), taps(64);
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> d(-1.f, 1.f);
        for (auto &v : host) v = d(rng);
        for (auto &v : taps) v = d(rng);
        CK(cudaMemcpy(da, host.data(), big * 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dk, taps.data(), 64 * 4, cudaMemcpyHostToDevice));
    }
    cudaEvent_t a, b;
    cudaEventCreate(&a);
    cudaEventCreate(&b);
    std::vector<float> t;
    for (int r = 0; r < 20; r++) {
        cudaEventRecord(a);
        cudaMemcpyAsync(db, da, big * 4, cudaMemcpyDeviceToDevice);
        cudaEventRecord(b);
        cudaEventSynchronize(b);
        float ms;
        cudaEventElapsedTime(&ms, a, b);
        if (r >= 5) t.push_back(ms);
    }
    std::sort(t.begin(), t.end());
    const double gbs = 2.0 * big * 4 / (t[t.size() / 2] * 1e-3) / 1e9;
    printf("device copy: %.0f GB/s\n", gbs);
    const auto floor_of = [&](double px) { return 2.0 * px * 4 / (gbs * 1e9) * 1e3; };
    for (auto [w, h, im] : {std::array<int, 3>{1024, 1024, 1}, {4096, 4096, 1}, {8192, 8192, 1}, {1024, 1024, 64}}) {
        const double fl = floor_of(double(w) * h * im);
        printf("%dx%dx%d floor %.4f ms\n", w, h, im, fl);
        sweep<3, true, 2, 2, 8>(da, db, dk, w, h, im, 3, fl);  // the form float16 samples take
        sweep_staged<3, true, 4, 6>(da, db, dk, w, h, im, 3, fl);
        sweep_staged<3, true, 4, 8>(da, db, dk, w, h, im, 3, fl);
        sweep_staged<3, true, 2, 8>(da, db, dk, w, h, im, 3, fl);
        sweep_staged<1, true, 4, 8>(da, db, dk, w, h, im, 1, fl);
        sweep_staged<5, true, 4, 8>(da, db, dk, w, h, im, 5, fl);
        sweep_staged<7, true, 4, 8>(da, db, dk, w, h, im, 7, fl);
        sweep_staged<7, false, 4, 8>(da, db, dk, w, h, im, 7, fl);
    }
    return bad != 0;
}
