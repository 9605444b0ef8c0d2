// Halide's runtime hooks shared by every halconv pipeline, CPU or CUDA: Halide runtime
// errors captured as messages (the entry points throw them as halconv::Error), and the
// stream each call's CUDA work goes to.
#include <mutex>

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
