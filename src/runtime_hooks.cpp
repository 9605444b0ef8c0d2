// Halide's runtime hooks shared by every halconv pipeline, CPU or CUDA: Halide runtime
// errors captured as messages (the entry points throw them as halconv::Error), the
// stream each call's CUDA work goes to, and the CPU thread pool's size.
#include <algorithm>
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

}  // namespace

void install_runtime_hooks() {
    static std::once_flag once;
    std::call_once(once, [] {
        install_cuda_hooks();
        halide_set_error_handler(capture_error);
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
