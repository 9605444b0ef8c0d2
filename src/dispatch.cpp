// Steps every entry point shares: device choice, buffer preparation, error reporting.
#include "internal.h"

namespace halconv::internal {

Device resolve_device(Device requested) {
    if (requested == Device::automatic) {
        return cuda_available() ? Device::cuda : Device::cpu;
    }
    if (requested == Device::cuda && !cuda_available()) {
        throw Error(ErrorCode::device, "device cuda was requested but " + cuda_unavailable_reason() +
                                           "; use device cpu, or auto to fall back to the CPU");
    }
    return requested;
}

// Placement of the output's first sample relative to the image's first sample, per
// axis: SciPy's full output starts k-1 before the image; same takes the centre of
// full, which for even k sits differently for correlation and convolution.
int mode_offset(int k, Mode mode, bool flip) {
    switch (mode) {
        case Mode::valid:
            return 0;
        case Mode::full:
            return k - 1;
        case Mode::same:
            return flip ? k / 2 : (k - 1) / 2;
    }
    return 0;
}

// Bring buffers to the side the pipeline runs on, and mark the output as freshly written.
void prepare_cpu(std::initializer_list<halide_buffer_t *> inputs, halide_buffer_t *output) {
    for (halide_buffer_t *b : inputs) {
        if (b->device_dirty()) {
            if (b->host == nullptr) {
                throw Error(ErrorCode::invalid_argument,
                            "a device-only buffer was passed for a CPU run; use device cuda or give it host memory");
            }
            if (halide_copy_to_host(nullptr, b) != 0) {
                throw Error(ErrorCode::device,
                            "could not copy an input back to the host: " + internal::take_last_runtime_error());
            }
        }
    }
    if (output->host == nullptr) {
        throw Error(ErrorCode::invalid_argument,
                    "output has no host memory for a CPU run; allocate host memory or use device cuda");
    }
    output->set_device_dirty(false);
}

// A buffer with host memory and no device allocation holds its data on the host, dirty
// flag or not (Halide's Buffer does not set it on element writes); Halide uploads only
// host-dirty buffers, so mark them before a GPU run.
void prepare_gpu(std::initializer_list<halide_buffer_t *> inputs, halide_buffer_t *output) {
    for (halide_buffer_t *b : inputs) {
        if (b->host != nullptr && b->device == 0) {
            b->set_host_dirty(true);
        }
    }
    output->set_host_dirty(false);
}

void finish_cpu(halide_buffer_t *output) {
    if (output->device != 0) {
        output->set_host_dirty(true);
    }
}

void check_mode(Mode mode) {
    if (static_cast<uint32_t>(mode) > 2) {
        throw Error(ErrorCode::invalid_argument,
                    "unknown mode " + std::to_string(int(mode)) + "; allowed: valid, same, full");
    }
}

void check_boundary(Boundary boundary) {
    if (static_cast<uint32_t>(boundary) > 4) {
        throw Error(ErrorCode::invalid_argument, "unknown boundary " + std::to_string(int(boundary)) +
                                                     "; allowed: constant, nearest, reflect, mirror, wrap");
    }
}

void check_precision(Precision precision) {
    if (static_cast<uint32_t>(precision) > 3) {
        throw Error(ErrorCode::invalid_argument,
                    "unknown precision " + std::to_string(int(precision)) + "; allowed: f64, f32, f16, f16f32");
    }
}

void check_device(Device device) {
    if (static_cast<uint32_t>(device) > 2) {
        throw Error(ErrorCode::invalid_argument,
                    "unknown device " + std::to_string(int(device)) + "; allowed: auto, cpu, cuda");
    }
}

ErrorCode error_code_of(int halide_status) {
    switch (halide_status) {
        case halide_error_code_out_of_memory:
        case halide_error_code_device_malloc_failed:
        case halide_error_code_buffer_allocation_too_large:
            return ErrorCode::out_of_memory;
        case halide_error_code_copy_to_host_failed:
        case halide_error_code_copy_to_device_failed:
        case halide_error_code_device_sync_failed:
        case halide_error_code_device_free_failed:
        case halide_error_code_no_device_interface:
        case halide_error_code_device_run_failed:
        case halide_error_code_gpu_device_error:
        case halide_error_code_device_buffer_copy_failed:
        case halide_error_code_device_interface_no_device:
            return ErrorCode::device;
        default:
            return ErrorCode::internal;
    }
}

void check_call(int result, const char *what) {
    if (result != 0) {
        std::string message = internal::take_last_runtime_error();
        throw Error(error_code_of(result), std::string(what) + " failed (Halide error " + std::to_string(result) +
                                               (message.empty() ? std::string(")") : "): " + message));
    }
}

std::string shape_text(int w, int h) {
    return std::to_string(w) + " x " + std::to_string(h);
}

}  // namespace halconv::internal
