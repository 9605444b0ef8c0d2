// Asynchronous global -> shared copies (PTX cp.async, sm_80+) for the implicit GEMMs:
// the copy of the next step's data runs while the current step multiplies.
#pragma once

#include <cstdint>

namespace halconv::tc {

// Copies src_bytes (0 .. Bytes) to the shared address dst and zero-fills the rest of
// the Bytes (4, 8 or 16): a copy with src_bytes 0 writes zeros and reads nothing.
template <int Bytes>
__device__ inline void cp_async_zfill(uint32_t dst, const void *src, int src_bytes) {
    if constexpr (Bytes == 16) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(src_bytes));
    } else {
        asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(dst), "l"(src), "n"(Bytes),
                     "r"(src_bytes));
    }
}

__device__ inline void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n");
}

// Waits until at most Pending of this thread's committed copy groups are in flight.
template <int Pending>
__device__ inline void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

}  // namespace halconv::tc
