// Which TMA loads of a phase map raise an illegal instruction: config from argv.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

struct Args {
    CUtensorMap maps[4];
    int phases, shift[4], box_rows, x, y, dst_step, which;
    float *out;
};

__global__ void k(const __grid_constant__ Args a) {
    extern __shared__ __align__(1024) unsigned char raw[];
    unsigned char *base = raw + ((1024 - (uint32_t(__cvta_generic_to_shared(raw)) & 1023)) & 1023);
    __shared__ uint64_t bar;
    const uint32_t b = uint32_t(__cvta_generic_to_shared(&bar));
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(1));
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        const uint32_t bytes = 32 * 4 * a.box_rows * (a.which < 0 ? a.phases : 1);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
#pragma unroll
        for (int r = 0; r < 4; r++) {
            if ((a.which < 0 && r < a.phases) || r == a.which) {
                const uint32_t dst = uint32_t(__cvta_generic_to_shared(base)) + (a.which < 0 ? r : 0) * a.dst_step;
                asm volatile(
                    "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
                    " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                    "l"(&a.maps[r]), "r"(a.x + a.shift[r]), "r"(a.y), "r"(b)
                    : "memory");
            }
        }
        asm volatile(
            "{\n.reg .pred done;\nw:\nmbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n@!done bra w;\n}" ::"r"(
                b)
            : "memory");
    }
    __syncthreads();
    for (int i = threadIdx.x; i < 4096; i += blockDim.x) {
        a.out[i] = reinterpret_cast<float *>(base)[i];
    }
}

int main(int argc, char **argv) {
    const int pitch = atoi(argv[1]), phases = atoi(argv[2]), box_rows = atoi(argv[3]), dst_step = atoi(argv[4]);
    const int which = argc > 5 ? atoi(argv[5]) : -1, width = pitch - 1, lines = 64;
    float *img, *out;
    cudaMalloc(&img, size_t(pitch) * lines * 4 + 64);
    cudaMalloc(&out, 4096 * 4);
    std::vector<float> h(size_t(pitch) * lines);
    for (size_t i = 0; i < h.size(); i++) h[i] = float(i);
    cudaMemcpy(img, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
    cudaDriverEntryPointQueryResult q;
    void *fn = nullptr;
    cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &q);
    auto encode = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
    Args a{};
    a.phases = phases;
    a.box_rows = box_rows;
    a.x = 0;
    a.y = 0;
    a.dst_step = dst_step;
    a.which = which;
    a.out = out;
    for (int r = 0; r < phases; r++) {
        const uintptr_t start = uintptr_t(img + size_t(r) * pitch), from = start / 16 * 16;
        a.shift[r] = int(start - from) / 4;
        cuuint64_t dims[2] = {cuuint64_t(width + a.shift[r]), cuuint64_t((lines - r + phases - 1) / phases)};
        cuuint64_t strides[1] = {cuuint64_t(phases) * pitch * 4};
        cuuint32_t box[2] = {32, cuuint32_t(box_rows)}, unit[2] = {1, 1};
        CUresult e = encode(&a.maps[r], CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, reinterpret_cast<void *>(from), dims,
                            strides, box, unit, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
        std::printf("map %d: shift %d encode %d\n", r, a.shift[r], int(e));
    }
    cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, 20000);
    k<<<1, 128, 20000>>>(a);
    cudaError_t e = cudaDeviceSynchronize();
    std::printf("pitch %d phases %d box_rows %d dst_step %d which %d: %s\n", pitch, phases, box_rows, dst_step, which,
                cudaGetErrorString(e));
    if (e == cudaSuccess) {
        std::vector<float> o(4096);
        cudaMemcpy(o.data(), out, 4096 * 4, cudaMemcpyDeviceToHost);
        int bad = 0;
        for (int r = 0; r < (which < 0 ? phases : 1); r++) {
            const int rr = which < 0 ? r : which;
            for (int n = 0; n < box_rows; n++) {
                for (int c = 0; c < 32; c++) {
                    const int at = (r * dst_step + n * 128 + (((c / 4) ^ (n % 8)) * 16) + (c % 4) * 4) / 4;
                    const float want = float(size_t(rr + phases * n) * pitch + c);
                    if (o[at] != want && bad++ < 3)
                        std::printf("  r %d n %d c %d: got %g want %g\n", rr, n, c, o[at], want);
                }
            }
        }
        std::printf("  %d wrong\n", bad);
    }
    return 0;
}
