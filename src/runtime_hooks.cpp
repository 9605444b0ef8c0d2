// Halide's runtime hooks shared by every halconv pipeline, CPU or CUDA: Halide runtime
// errors captured as messages (the entry points throw them as halconv::Error), Halide's
// host allocations kept for reuse, the stream each call's CUDA work goes to, and the CPU
// thread pool's size.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "internal.h"

namespace halconv::internal {
namespace {

thread_local Stream stream_of_thread = nullptr;
thread_local std::string last_runtime_error;

void capture_error(void * /*user_context*/, const char *message) {
    last_runtime_error = message ? message : "unknown Halide runtime error";
}

// A scratch block: `header` bytes (its total size and a tag just before the caller's
// pointer), the caller's bytes rounded up to the alignment, and `header` bytes of slack.
constexpr size_t scratch_alignment = 128, scratch_header = scratch_alignment;
constexpr uint64_t scratch_tag = 0x68616c636f6e7363ull;  // "halconsc"

struct ScratchCache {
    struct Block {
        void *base;
        size_t bytes;
    };
    Block blocks[scratch_cached_blocks] = {};
    int count = 0;
    size_t held = 0;
    ~ScratchCache() {
        for (int i = 0; i < count; i++) {
            std::free(blocks[i].base);
        }
    }
};
thread_local ScratchCache scratch_cache;

}  // namespace

void *scratch_malloc(void *, size_t bytes) {
    const size_t total =
        scratch_header + (bytes + scratch_alignment - 1) / scratch_alignment * scratch_alignment + scratch_header;
    ScratchCache &c = scratch_cache;
    void *base = nullptr;
    for (int i = c.count - 1; i >= 0; i--) {
        if (c.blocks[i].bytes == total) {
            base = c.blocks[i].base;
            c.held -= total;
            std::move(c.blocks + i + 1, c.blocks + c.count, c.blocks + i);  // the rest stay in age order
            c.count--;
            break;
        }
    }
    if (base == nullptr) {
        base = std::aligned_alloc(scratch_alignment, total);
        if (base == nullptr) {
            return nullptr;
        }
    }
    uint64_t *const at = reinterpret_cast<uint64_t *>(static_cast<char *>(base) + scratch_header);
    at[-2] = total;
    at[-1] = scratch_tag;
    return at;
}

void scratch_free(void *user_context, void *ptr) {
    if (ptr == nullptr) {
        return;
    }
    const uint64_t *const at = static_cast<const uint64_t *>(ptr);
    if (at[-1] != scratch_tag) {
        halide_default_free(user_context, ptr);
        return;
    }
    const size_t total = at[-2];
    void *const base = static_cast<char *>(ptr) - scratch_header;
    ScratchCache &c = scratch_cache;
    if (total > scratch_cached_bytes) {
        std::free(base);
        return;
    }
    // The oldest blocks make room.
    while (c.count > 0 && (c.count == scratch_cached_blocks || c.held + total > scratch_cached_bytes)) {
        std::free(c.blocks[0].base);
        c.held -= c.blocks[0].bytes;
        std::move(c.blocks + 1, c.blocks + c.count, c.blocks);
        c.count--;
    }
    c.blocks[c.count++] = {base, total};
    c.held += total;
}

void install_runtime_hooks() {
    static std::once_flag once;
    std::call_once(once, [] {
        install_cuda_hooks();
        halide_set_error_handler(capture_error);
        halide_set_custom_malloc(scratch_malloc);
        halide_set_custom_free(scratch_free);
    });
}

StreamScope::StreamScope(Stream stream) : previous_(stream_of_thread) {
    stream_of_thread = stream;
}

StreamScope::~StreamScope() {
    stream_of_thread = previous_;
}

Stream current_stream() {
    return stream_of_thread;
}

std::string take_last_runtime_error() {
    std::string message;
    message.swap(last_runtime_error);
    return message;
}

}  // namespace halconv::internal

namespace halconv {

namespace {

std::mutex cpu_threads_mutex;
int cpu_threads_set = 0;  // 0: the default

// Halide's own default (thread_pool_common.h): HL_NUM_THREADS, else the hardware threads.
int default_cpu_threads() {
    const char *text = std::getenv("HL_NUM_THREADS");
    const int n = text != nullptr ? std::atoi(text) : int(std::thread::hardware_concurrency());
    return std::clamp(n, 1, max_cpu_threads);
}

}  // namespace

int set_cpu_threads(int n) {
    if (n < 0 || n > max_cpu_threads) {
        throw Error(ErrorCode::invalid_argument, "CPU threads " + std::to_string(n) + " out of range; allowed: 1 to " +
                                                     std::to_string(max_cpu_threads) + ", or 0 for the default");
    }
    std::lock_guard<std::mutex> lock(cpu_threads_mutex);
    const int previous = cpu_threads_set > 0 ? cpu_threads_set : default_cpu_threads();
    halide_set_num_threads(n);
    cpu_threads_set = n;
    return previous;
}

int cpu_threads() {
    std::lock_guard<std::mutex> lock(cpu_threads_mutex);
    return cpu_threads_set > 0 ? cpu_threads_set : default_cpu_threads();
}

}  // namespace halconv
