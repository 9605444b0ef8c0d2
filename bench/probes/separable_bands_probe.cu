// Sweep of the sliding separable pass's split (runtime_kernels/separable/): for each
// precision, image size and kernel, the library kernel launched directly with every
// distinct band height up to 8 waves of resident blocks, in the strip width the library
// picks or (`widths`) in each that fits, timed, beside the library's choice of width and
// band count (sliding_split). The measurements its model is fitted to and checked against.
// Build: nvcc -Iruntime_kernels -isystem <halide>/include -O3 -std=c++20 -arch=sm_90 <this> -o probe
// Run:   probe > bands.csv          (probe widths: every strip width that fits, not only the library's)
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "separable/separable_sliding.cu"
// After the kernel's file (its stubs complete the kernel's helpers).
#include "probe_support.cuh"

using namespace halconv::rk;
using namespace halconv::rk::sep;

namespace {

// Median over 11 timings of up to 10 back-to-back launches (per launch, ms; fewer launches
// a timing for slow grids); the image stays resident in L2 where it fits, as in the
// library's benchmark.
template <auto Kernel, typename S, typename A>
float time_launches(const SlidingArgs<S, A> &p, dim3 grid) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> t;
    int launches = 1;
    for (int r = 0; r < 12; r++) {
        CK(cudaEventRecord(a));
        for (int i = 0; i < launches; i++) {
            Kernel<<<grid, threads, p.layout.total_bytes>>>(p);
        }
        CK(cudaGetLastError());
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float ms = 0;
        CK(cudaEventElapsedTime(&ms, a, b));
        if (r > 0) {
            t.push_back(ms / float(launches));
        } else {
            launches = std::clamp(int(1.0f / ms), 1, 10);  // about 1 ms a timing
        }
    }
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    std::sort(t.begin(), t.end());
    return t[t.size() / 2];
}

// The library's choice for p: its strip width and band count (its plan).
struct Choice {
    int tile = 0, bands = 0;
};

template <typename S, typename A, typename O, int TW>
void sweep_tile(const char *precision, SlidingArgs<S, A> p, const char *size_name, Choice library) {
    constexpr auto kernel = separable_sliding_kernel<S, A, O, TW>;
    CK(allow_opt_in_shared_memory<kernel>());
    int per_sm = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, p.layout.total_bytes));
    const int64_t resident = int64_t(per_sm) * device_sm_count();
    const int64_t strips = (int64_t(p.out_width) + TW - 1) / TW;
    const int ch = p.layout.chunk_rows;
    const int64_t chunks = (int64_t(p.out_height) + ch - 1) / ch;
    const int64_t most = std::min<int64_t>({chunks, 65535, std::max<int64_t>(1, 8 * resident / strips)});
    int64_t last_rows = -1;
    for (int64_t bands = 1; bands <= most; bands++) {
        const int64_t per_band = (chunks + bands - 1) / bands;
        if (per_band == last_rows) {
            continue;  // the same grid as the band count before
        }
        last_rows = per_band;
        p.band_rows = int(per_band * ch);
        const dim3 grid(unsigned(strips), unsigned((int64_t(p.out_height) + p.band_rows - 1) / p.band_rows));
        const float ms = time_launches<kernel>(p, grid);
        printf("%s,%s,%d,%d,%d,%d,%lld,%lld,%u,%lld,%d,%.5f,%d\n", precision, size_name, p.kw, TW, p.layout.lag, per_sm,
               (long long)strips, (long long)chunks, grid.y, (long long)per_band, library.bands, ms, library.tile);
    }
}

// Every strip width whose layout fits the budget when `widths`, else the one the library
// picks.
bool widths = false;

template <typename S, typename A, typename O>
void sweep(const char *precision, int w, int h, int k) {
    if (!sliding_fits(k, k, int(sizeof(S)))) {
        return;
    }
    SlidingArgs<S, A> p{};
    S *image = nullptr, *taps = nullptr;
    O *out = nullptr;
    CK(cudaMalloc(&image, size_t(w) * h * sizeof(S)));
    CK(cudaMalloc(&out, size_t(w) * h * sizeof(O)));
    CK(cudaMalloc(&taps, size_t(k) * sizeof(S)));
    CK(cudaMemset(image, 0, size_t(w) * h * sizeof(S)));  // zeros: the timing does not depend on values
    CK(cudaMemset(taps, 0, size_t(k) * sizeof(S)));
    p.image = image;
    p.image_stride = w;
    p.image_width = w;
    p.image_height = h;
    p.out = out;
    p.out_stride = w;
    p.out_width = w;
    p.out_height = h;
    p.row_taps = p.col_taps = taps;
    p.kw = p.kh = k;
    p.boundary = 2;  // reflect
    p.base_x = p.base_y = -(k - 1) / 2;
    SlidingArgs<S, A> chosen = p;
    dim3 grid;
    CK((plan<S, A, O>(chosen, &grid)));
    const Choice library{chosen.layout.tile_columns, int(grid.y)};
    const std::string size_name = std::to_string(w) + "x" + std::to_string(h);
    for (const int tile : sliding_tile_widths) {
        p.layout = sliding_layout_for(tile, k, k, int(sizeof(S)));
        if (p.layout.total_bytes > sliding_shared_budget || (!widths && tile != library.tile)) {
            continue;
        }
        if (tile == 128) {
            sweep_tile<S, A, O, 128>(precision, p, size_name.c_str(), library);
        } else {
            sweep_tile<S, A, O, 64>(precision, p, size_name.c_str(), library);
        }
    }
    CK(cudaFree(image));
    CK(cudaFree(out));
    CK(cudaFree(taps));
}

}  // namespace

int main(int argc, char **argv) {
    widths = argc > 1 && std::string(argv[1]) == "widths";
    printf("precision,size,k,tile,lag,per_sm,strips,chunks,bands,chunks_per_band,library_bands,ms,library_tile\n");
    const int sizes[][2] = {{512, 512}, {1024, 1024}, {2048, 2048}, {3840, 2160}, {4096, 4096}, {8192, 8192}};
    for (const auto &s : sizes) {
        for (int k : {3, 7, 15, 31, 63, 95, 127, 193}) {
            sweep<float, float, float>("f32", s[0], s[1], k);
            sweep<__half, float, __half>("f16", s[0], s[1], k);
            sweep<double, double, double>("f64", s[0], s[1], k);
        }
    }
    return 0;
}
