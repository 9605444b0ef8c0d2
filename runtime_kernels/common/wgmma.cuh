// Hopper warpgroup tensor-core instructions (PTX wgmma, sm_90a only): a warpgroup of four
// consecutive warps multiplies a 64 x N x 16 product asynchronously, both operands read from
// shared memory through matrix descriptors (PTX ISA, "Asynchronous Warpgroup Level Matrix
// Shared Memory Layout").
//
// Operands here are without swizzle. k-major: a "core matrix" is 8 rows (m or n) of 8
// halfs (16 bytes) along k, stored as 128 contiguous bytes; the descriptor gives the start
// of the first one, the byte distance between core matrices adjacent in k (leading, LBO)
// and in m or n (stride, SBO). Any 16-byte aligned start works, which is what lets the
// implicit GEMM read the image patch at a shift of one pixel. N-major B (TransB): a core
// matrix is 8 k-rows of 8 consecutive n, again 128 contiguous bytes; LBO is then the
// distance between core matrices adjacent in k and SBO in n (the single-channel im2tensor
// reads image rows so, at any row).
//
// Accumulator layout (f32, per warp w of the warpgroup, lane g = lane / 4, t = lane % 4):
//   d[4j + 0..1] = D(16w + g,     8j + 2t .. 8j + 2t + 1)
//   d[4j + 2..3] = D(16w + g + 8, 8j + 2t .. 8j + 2t + 1)
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

namespace halconv::rk {

// A no-swizzle descriptor (layout type 0, base offset 0). Addresses and offsets are in
// bytes, multiples of 16, below 256 KiB.
__device__ inline uint64_t wgmma_descriptor(uint32_t start, uint32_t lbo, uint32_t sbo) {
    return uint64_t((start >> 4) & 0x3fff) | uint64_t((lbo >> 4) & 0x3fff) << 16 | uint64_t((sbo >> 4) & 0x3fff) << 32;
}

// The descriptor moved by `bytes` (a multiple of 16): the start address is its low field.
__device__ inline uint64_t wgmma_offset(uint64_t desc, uint32_t bytes) {
    return desc + (bytes >> 4);
}

// A k-major descriptor of 128-byte-swizzled atoms (layout type 1: 8 rows of 64 halfs, 1024
// bytes, SBO 1024): rows of an operand 128 bytes apart, their 16-byte chunks permuted by
// the row within the atom, so that staging stores and the wgmma's reads miss bank conflicts.
__device__ inline uint64_t wgmma_sw128_descriptor(uint32_t start) {
    return uint64_t((start >> 4) & 0x3fff) | uint64_t(1) << 16 | uint64_t(1024 >> 4) << 32 | uint64_t(1) << 62;
}

// Orders earlier register accesses to the accumulators before the next wgmma.
__device__ inline void wgmma_fence() {
    asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

// Makes this thread's ordinary shared-memory stores visible to wgmma (the async proxy)
// that a later barrier orders after them.
__device__ inline void fence_proxy_async() {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

__device__ inline void wgmma_commit() {
    asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Waits until at most Pending committed groups of this warpgroup are still running.
template <int Pending>
__device__ inline void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}

// d (64 x N, f32) = A B + (accumulate ? d : 0); A (64 x 16) and B (16 x N) f16 in shared
// memory, given by descriptors; A k-major, B k-major (TransB 0) or N-major (1, as below).
template <int TransB = 0>
__device__ inline void wgmma_m64n128k16(float (&d)[64], uint64_t a, uint64_t b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
        "}, %64, %65, p, 1, 1, 0, %67;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
          "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
          "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
          "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
        : "l"(a), "l"(b), "r"(int(accumulate)), "n"(TransB));
}

// d (64 x 32) = A B + (accumulate ? d : 0), A from registers (mma.m16n8k16's fragment per
// warp: warp w holds rows 16 w .. 16 w + 15), B k-major from shared memory.
__device__ inline void wgmma_m64n32k16_ra(float (&d)[16], const uint32_t (&a)[4], uint64_t b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n32k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
        "}, {%16, %17, %18, %19}, %20, p, 1, 1, 0;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(int(accumulate)));
}

// TransB 1: B is N-major (PTX imm-trans-b), each 16-byte core-matrix row 8 consecutive n
// at one k (see the canonical layouts in the PTX ISA); 0: k-major as above.
template <int TransB = 0>
__device__ inline void wgmma_m64n256k16(float (&d)[128], uint64_t a, uint64_t b, bool accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
        "}, %128, %129, p, 1, 1, 0, %131;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
          "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
          "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
          "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]),
          "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]),
          "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]),
          "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]),
          "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), "+f"(d[64]),
          "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), "+f"(d[72]),
          "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), "+f"(d[80]),
          "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), "+f"(d[88]),
          "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), "+f"(d[96]),
          "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), "+f"(d[104]),
          "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]),
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]),
          "+f"(d[119]), "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]),
          "+f"(d[126]), "+f"(d[127])
        : "l"(a), "l"(b), "r"(int(accumulate)), "n"(TransB));
}

// Two floats as one register of two halves (round to nearest), x in the low half.
__device__ inline uint32_t pack_half2(float x, float y) {
    const __half2 h = __floats2half2_rn(x, y);
    return *reinterpret_cast<const uint32_t *>(&h);
}

// Stores four 8 x 8 b16 blocks given in the mma fragment layout (lane g = lane / 4 holds
// row g, columns 2t and 2t + 1 of block i in r_i) transposed: column c of block i goes to
// the 16 bytes at the address lane 8i + c gives.
__device__ inline void stmatrix_x4_trans(uint32_t address, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(address), "r"(r0),
                 "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

}  // namespace halconv::rk
