// Stand-alone probe of the sliding separable kernel (runtime_kernels/separable/) and of the
// tensor-core experiment beside it (separable_tensor_core.cuh): launched directly, checked
// against float64 sums over every boundary, mode and flip, and timed side by side.
// Build: nvcc -Iruntime_kernels -isystem <halide>/include -O3 -std=c++20 -arch=sm_90 <this> -o probe
#include <cstdio>
#include <random>
#include <vector>
#include <algorithm>
#include "separable/separable_sliding.cu"
#include "probe_support.cuh"
#include "separable_tensor_core.cuh"

using namespace halconv::rk;
using namespace halconv::rk::sep;

static int64_t src_index(int64_t i, int64_t n, int b) { return band_source_index(i, n, b); }

struct Case { int w, h, kw, kh, ow, oh, ox, oy, boundary; bool flip; };

// The tensor-core experiment's layout for p's kernel on this device: tile_columns 0 where
// it does not take the kernel (kw + kh < 40, or shared memory) and with cuda_cores.
TcLayout case_layout(const SlidingArgs<float, float> &p, bool cuda_cores) {
    int d = 0, per_block = 0, per_sm = 0;
    CK(cudaGetDevice(&d));
    CK(cudaDeviceGetAttribute(&per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, d));
    CK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, d));
    return cuda_cores ? TcLayout{} : tensor_core_layout(p.kw, p.kh, 4, size_t(per_block), size_t(per_sm));
}

// The tensor-core experiment with tc where it has a layout, else the library's CUDA-core pass.
cudaError_t launch_case(SlidingArgs<float, float> &p, const TcLayout &tc) {
    if (tc.tile_columns == 0) return launch<float, float, float>(p, nullptr);
    SlidingArgs<float, float> q = p;
    q.layout = tc;
    return tc.tile_columns == 128 ? launch_tensor_core_tile<float, 128>(q, tc.stages, nullptr)
                                  : launch_tensor_core_tile<float, 64>(q, tc.stages, nullptr);
}

// Returns max relative error over checked outputs (all when few, else a sample).
double run_case(const Case &c, bool time_it, float *ms_out, bool cuda_cores = false) {
    std::mt19937 rng(c.w * 131 + c.kw);
    std::uniform_real_distribution<float> d(-1.f, 1.f);
    std::vector<float> img(size_t(c.w) * c.h), rt(c.kw), ct(c.kh);
    for (auto &v : img) v = d(rng);
    for (auto &v : rt) v = d(rng);
    for (auto &v : ct) v = d(rng);
    float *dimg, *dout, *drt, *dct;
    CK(cudaMalloc(&dimg, img.size() * 4)); CK(cudaMalloc(&dout, size_t(c.ow) * c.oh * 4));
    CK(cudaMalloc(&drt, c.kw * 4)); CK(cudaMalloc(&dct, c.kh * 4));
    CK(cudaMemcpy(dimg, img.data(), img.size() * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(drt, rt.data(), c.kw * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(dct, ct.data(), c.kh * 4, cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0xff, size_t(c.ow) * c.oh * 4));
    SlidingArgs<float, float> p{};
    p.layout = sliding_layout(c.kw, c.kh, 4);
    if (p.layout.tile_columns == 0) {
        printf("  K %dx%d does not fit the sliding pass\n", c.kw, c.kh);
        exit(1);
    }
    p.image = dimg; p.image_stride = c.w; p.image_width = c.w; p.image_height = c.h;
    p.out = dout; p.out_stride = c.ow; p.out_width = c.ow; p.out_height = c.oh;
    p.row_taps = drt; p.col_taps = dct; p.kw = c.kw; p.kh = c.kh; p.flip = c.flip;
    p.boundary = c.boundary; p.fill = 0.25f; p.base_x = -c.ox; p.base_y = -c.oy;
    const TcLayout tc = case_layout(p, cuda_cores);
    CK(launch_case(p, tc));
    CK(cudaDeviceSynchronize());
    if (time_it) {
        cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
        std::vector<float> t;
        for (int r = 0; r < 25; r++) {
            cudaEventRecord(a);
            CK(launch_case(p, tc));
            cudaEventRecord(b); cudaEventSynchronize(b);
            float ms; cudaEventElapsedTime(&ms, a, b); if (r >= 5) t.push_back(ms);
        }
        std::sort(t.begin(), t.end());
        *ms_out = t[t.size() / 2];
    }
    std::vector<float> out(size_t(c.ow) * c.oh);
    CK(cudaMemcpy(out.data(), dout, out.size() * 4, cudaMemcpyDeviceToHost));
    auto sample = [&](int64_t x, int64_t y) -> double {
        const int64_t a = src_index(x, c.w, c.boundary), b = src_index(y, c.h, c.boundary);
        return a < 0 || b < 0 ? double(0.25f) : double(img[size_t(b) * c.w + a]);
    };
    const int64_t total = int64_t(c.ow) * c.oh;
    const int checks = int(std::min<int64_t>(total, 20000));
    double worst = 0;
    std::uniform_int_distribution<int64_t> pick(0, total - 1);
    for (int n = 0; n < checks; n++) {
        const int64_t idx = total <= 20000 ? n : pick(rng);
        const int64_t x = idx % c.ow, y = idx / c.ow;
        double s = 0, m = 0;
        for (int j = 0; j < c.kh; j++) {
            double r = 0, rm = 0;
            for (int i = 0; i < c.kw; i++) {
                const double v = sample(x + i - c.ox, y + j - c.oy) * rt[c.flip ? c.kw - 1 - i : i];
                r += v; rm += std::fabs(v);
            }
            s += ct[c.flip ? c.kh - 1 - j : j] * r; m += std::fabs(ct[c.flip ? c.kh - 1 - j : j]) * rm;
        }
        const double got = out[idx];
        const double err = std::fabs(got - s) / std::max(m, 1e-30);
        if (!(err <= 1e300)) { worst = 1e9; break; }
        worst = std::max(worst, err);
    }
    cudaFree(dimg); cudaFree(dout); cudaFree(drt); cudaFree(dct);
    return worst;
}

int main(int argc, char **argv) {
    if (argc >= 3) {  // one timed case: probe K SIZE [cuda-cores] (for a profiler)
        const int k = atoi(argv[1]), size = atoi(argv[2]);
        Case c{size, size, k, k, size, size, (k - 1) / 2, (k - 1) / 2, 2, false};
        float ms = 0;
        const double e = run_case(c, true, &ms, argc > 3);
        printf("%d^2 K=%3d  %.4f ms  err %.2g\n", size, k, ms, e);
        return 0;
    }
    int bad = 0;
    double worst_ratio = 0;
    printf("correctness (max |err| / sum|terms|; bound ~ (kw + kh) 2^-24):\n");
    const int ks[][2] = {{1,1},{3,3},{8,8},{9,17},{31,7},{63,63},{127,127},{127,3},{3,127},{13,250},{100,90},
                         {20,20},{21,19},{33,9},{41,1},{1,41},{64,64},{65,65},{95,95}};
    const int sizes[][2] = {{333,517},{64,32},{45,40},{1,300},{300,1},{1000,70}};
    int n = 0;
    for (auto &k : ks) for (auto &s : sizes) for (int mode = 0; mode < 3; mode++) {
        Case c{s[0], s[1], k[0], k[1], 0, 0, 0, 0, n % 5, n % 2 == 1}; n++;
        if (mode == 0) { c.ow = s[0]; c.oh = s[1]; c.ox = (k[0] - 1) / 2; c.oy = (k[1] - 1) / 2; }
        else if (mode == 1) { c.ow = s[0] - k[0] + 1; c.oh = s[1] - k[1] + 1; if (c.ow < 1 || c.oh < 1) continue; }
        else { c.ow = s[0] + k[0] - 1; c.oh = s[1] + k[1] - 1; c.ox = k[0] - 1; c.oy = k[1] - 1; }
        if (!sliding_fits(c.kw, c.kh, 4)) continue;
        float ms;
        const double e = run_case(c, false, &ms);
        const bool ok = e <= (c.kw + c.kh + 4) * 6e-8;
        if (!ok) { bad++; printf("FAIL %dx%d K %dx%d mode %d boundary %d flip %d: %.3g\n", c.w, c.h, c.kw, c.kh, mode, c.boundary, int(c.flip), e); }
        worst_ratio = std::max(worst_ratio, e / ((c.kw + c.kh + 4) * 6e-8));
    }
    printf("%d cases, %d failed; largest error / bound %.3f\n", n, bad, worst_ratio);
    printf("time (same mode, reflect, f32, median of 20, ms):\n");
    for (int size : {4096, 8192}) for (int k : {15, 21, 31, 63, 95, 127}) {
        Case c{size, size, k, k, size, size, (k - 1) / 2, (k - 1) / 2, 2, false};
        float ms = 0, core_ms = 0;
        const double e = run_case(c, true, &ms);
        const double core_e = run_case(c, true, &core_ms, true);
        const double floor_ms = 2.0 * size * size * 4 / 3.0e12 * 1e3;
        printf("%d^2 K=%3d  %.4f ms (CUDA cores %.4f)  (memory floor %.4f, x%.2f; FMA floor %.4f)  err %.2g (CUDA cores %.2g)\n",
               size, k, ms, core_ms, floor_ms, ms / floor_ms, 2.0 * k * size * size / 33.5e12 * 1e3, e, core_e);
    }
    return bad != 0;
}
