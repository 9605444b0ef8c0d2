// Asynchronous global -> shared copies (PTX cp.async, sm_80+) for the implicit GEMMs (the
// copy of the next step's data runs while the current step multiplies) and for rows that
// TMA cannot copy.
#pragma once

#include <cstdint>

namespace halconv::rk {

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

}  // namespace halconv::rk

// ---- Hopper (sm_90) asynchronous copies: mbarriers and the tensor memory accelerator ----
// (Only sm_90 code may call these; unused inline functions emit no PTX elsewhere.)
//
// An mbarrier in shared memory counts arrivals and bytes: a phase completes when the
// expected arrivals have come and every byte announced with expect_tx has landed. Waits
// name the phase by its parity; a fresh barrier is in phase 0, and a wait for parity 1
// returns at once (that "previous" phase counts as complete).
namespace halconv::rk {

__device__ inline void mbarrier_init(uint32_t bar, int arrivals) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(arrivals) : "memory");
}

// Makes barrier initialisation visible to the async proxy (TMA) before the block syncs.
__device__ inline void mbarrier_init_fence() {
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

__device__ inline void mbarrier_arrive(uint32_t bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Holds the barrier's current phase until this thread's cp.async copies issued so far have
// landed (their writes then visible to the phase's waiters); not an arrival of its own.
__device__ inline void cp_async_mbarrier_arrive(uint32_t bar) {
    asm volatile("cp.async.mbarrier.arrive.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// One arrival that also announces `bytes` of asynchronous copies into this phase.
__device__ inline void mbarrier_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}

__device__ inline void mbarrier_wait(uint32_t bar, uint32_t parity) {
    asm volatile(
        "{\n.reg .pred done;\nwait_phase:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra wait_phase;\n}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}

// TMA: the box of a 2-D tensor map at coordinates (c0, c1) (out-of-range elements read as
// zero) into shared memory at dst; completion is counted on bar.
__device__ inline void tma_load_2d(uint32_t dst, const void *map, int c0, int c1, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3}], [%4];\n" ::"r"(dst),
        "l"(map), "r"(c0), "r"(c1), "r"(bar)
        : "memory");
}

// TMA: the box of a 3-D tensor map at coordinates (c0, c1, c2) (out-of-range elements
// read as zero) into shared memory at dst; completion is counted on bar.
__device__ inline void tma_load_3d(uint32_t dst, const void *map, int c0, int c1, int c2, uint32_t bar) {
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
        " [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(dst),
        "l"(map), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
        : "memory");
}

// TMA: shared memory at src into the box of a 2-D tensor map at coordinates (c0, c1); elements
// outside the tensor are not written. Committed with bulk_commit(), awaited with bulk_wait_*.
__device__ inline void tma_store_2d(const void *map, int c0, int c1, uint32_t src) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n" ::"l"(map), "r"(c0),
                 "r"(c1), "r"(src)
                 : "memory");
}
__device__ inline void bulk_commit() {
    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// Until at most Pending of this thread's committed bulk groups still read shared memory ...
template <int Pending>
__device__ inline void bulk_wait_read() {
    asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory");
}
// ... or are still in flight at all.
template <int Pending>
__device__ inline void bulk_wait() {
    asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(Pending) : "memory");
}

// A contiguous copy of `bytes` (a multiple of 16, both addresses 16-byte aligned).
__device__ inline void bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar) {
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
                 "l"(src), "r"(bytes), "r"(bar)
                 : "memory");
}

// A barrier for `threads` threads (whole warps) on hardware barrier `id` (1..15; 0 is
// __syncthreads).
__device__ inline void named_barrier(int id, int threads) {
    asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Arrives at hardware barrier `id` without waiting (whole warps; `threads` counts the
// arrivals and the waiters together).
__device__ inline void named_barrier_arrive(int id, int threads) {
    asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Warpgroup-wide register budget changes (setmaxnreg): a producer warpgroup lowers its
// per-thread count so that consumer warpgroups can raise theirs.
template <int Registers>
__device__ inline void set_max_registers_dec() {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
}
template <int Registers>
__device__ inline void set_max_registers_inc() {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
}

}  // namespace halconv::rk
