// The batch report (batch_report.h).
#include "batch_report.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "gpu_common.h"
#include "halconv/float16.h"
#include "halconv/halconv.h"

namespace halconv::bench {

const std::vector<std::string> batch_columns = {"device",
                                                "precision",
                                                "width",
                                                "height",
                                                "count",
                                                "K",
                                                "form",
                                                "algorithm",
                                                "status",
                                                "median_ms",
                                                "min_ms",
                                                "mpix_s",
                                                "fraction_of_single",
                                                "floor_ms",
                                                "fraction_of_floor",
                                                "note"};

namespace {

// A device-resident buffer of `type` and the given extents, filled with values in [-1, 1).
Halide::Runtime::Buffer<> device_buffer(halide_type_t type, std::vector<int> extents, bool fill) {
    Halide::Runtime::Buffer<> b(type, extents);
    if (fill) {
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        for (size_t i = 0; i < b.number_of_elements(); i++) {
            const float v = dist(rng);
            uint8_t *p = b.raw_buffer()->host + i * type.bytes();
            if (type.bits == 64) {
                *reinterpret_cast<double *>(p) = v;
            } else if (type.bits == 32) {
                *reinterpret_cast<float *>(p) = v;
            } else {
                *reinterpret_cast<uint16_t *>(p) = float16_bits_from_double(v);
            }
        }
        b.set_host_dirty();
    }
    if (b.copy_to_device(cuda_device_interface()) != 0) {
        throw Error(ErrorCode::out_of_memory, "a benchmark buffer on the device");
    }
    return b;
}

Timing wall_clock(int reps, cudaStream_t stream, const std::function<void()> &call) {
    call();
    check_cuda(cudaStreamSynchronize(stream), "the batch stream");
    std::vector<double> ms;
    for (int r = 0; r < reps; r++) {
        const auto start = std::chrono::steady_clock::now();
        call();
        check_cuda(cudaStreamSynchronize(stream), "the batch stream");
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    return {ms[ms.size() / 2], ms.front(), ms.back()};
}

bool same_bytes(Halide::Runtime::Buffer<> a, Halide::Runtime::Buffer<> b) {
    a.copy_to_host();
    b.copy_to_host();
    const size_t bytes = a.number_of_elements() * a.type().bytes();
    return a.number_of_elements() == b.number_of_elements() &&
           std::equal(a.raw_buffer()->host, a.raw_buffer()->host + bytes, b.raw_buffer()->host);
}

}  // namespace

void batch_report(const std::vector<Size> &sizes, const std::vector<int> &kernels,
                  const std::vector<Precision> &precisions, int count, int reps, double copy_bytes_per_s,
                  cudaStream_t stream, Table &table, const std::function<void()> &checkpoint) {
    cudaDeviceProp prop{};
    check_cuda(cudaGetDeviceProperties(&prop, 0), "device properties");
    const int side = int(std::lround(std::sqrt(double(count))));
    for (const Size &z : sizes) {
        for (Precision p : precisions) {
            const halide_type_t in_type = storage_type(p), out_type = output_type(p);
            Halide::Runtime::Buffer<> batch = device_buffer(in_type, {z.width, z.height, count}, true);
            Halide::Runtime::Buffer<> batch_out = device_buffer(out_type, {z.width, z.height, count}, false);
            Halide::Runtime::Buffer<> loop_out = device_buffer(out_type, {z.width, z.height, count}, false);
            const Size large{z.width * side, z.height * (count / side)};
            Halide::Runtime::Buffer<> single = device_buffer(in_type, {large.width, large.height}, true);
            Halide::Runtime::Buffer<> single_out = device_buffer(out_type, {large.width, large.height}, false);
            for (int k : kernels) {
                Halide::Runtime::Buffer<> kernel(in_type, k, k);
                // A box with its taps varied by up to 6 %: not separable, so that Auto weighs the 2D
                // algorithms as for a photo filter.
                for (size_t i = 0; i < kernel.number_of_elements(); i++) {
                    const double v = (1.0 + 0.01 * double(i % 7)) / double(k * k);
                    uint8_t *q = kernel.raw_buffer()->host + i * in_type.bytes();
                    if (in_type.bits == 64) {
                        *reinterpret_cast<double *>(q) = v;
                    } else if (in_type.bits == 32) {
                        *reinterpret_cast<float *>(q) = float(v);
                    } else {
                        *reinterpret_cast<uint16_t *>(q) = float16_bits_from_double(v);
                    }
                }
                Options o;
                o.precision = p;
                o.device = Device::cuda;
                o.stream = stream;
                const Plan large_plan({large.width, large.height}, kernel, o);
                // The plan of the batch and of the loop over its images: made for batches
                // of `count` (Auto weighs what that many images cost).
                o.batch_images = count;
                const Plan plan({z.width, z.height}, kernel, o);
                const double pixels = double(z.width) * z.height * count;
                const double floor_ms = 1e3 * pixels * double(in_type.bytes() + out_type.bytes()) / copy_bytes_per_s;
                std::vector<Halide::Runtime::Buffer<>> images, outputs;
                for (int i = 0; i < count; i++) {
                    images.push_back(batch.sliced(2, i));
                    outputs.push_back(loop_out.sliced(2, i));
                }
                const Timing single_t = wall_clock(reps, stream, [&] { large_plan.apply(single, single_out, stream); });
                const Timing loop_t = wall_clock(reps, stream, [&] {
                    for (int i = 0; i < count; i++) {
                        plan.apply(images[size_t(i)], outputs[size_t(i)], stream);
                    }
                });
                const Timing batch_t = wall_clock(reps, stream, [&] { plan.apply(batch, batch_out, stream); });
                // The loop's outputs as it wrote them (its slices are device-dirty; the whole
                // loop_out buffer is not marked so).
                const bool same = same_bytes(batch_out.sliced(2, 0), outputs.front()) &&
                                  same_bytes(batch_out.sliced(2, count - 1), outputs.back());
                const double single_rate = double(large.width) * large.height / single_t.median_ms;
                const auto row = [&](const char *form, const Timing &t, double px, const std::string &algorithm,
                                     const std::string &status) {
                    table.add_row();
                    table.set("device", std::string(prop.name));
                    table.set("precision", std::string(to_string(p)));
                    table.set("width", int64_t(z.width));
                    table.set("height", int64_t(z.height));
                    table.set("count", int64_t(count));
                    table.set("K", int64_t(k));
                    table.set("form", std::string(form));
                    table.set("algorithm", algorithm);
                    table.set("status", status);
                    table.set("median_ms", t.median_ms);
                    table.set("min_ms", t.min_ms);
                    table.set("mpix_s", px / t.median_ms / 1e3);
                    table.set("fraction_of_single", px / t.median_ms / single_rate);
                    table.set("floor_ms", floor_ms * px / pixels);
                    table.set("fraction_of_floor", floor_ms * px / pixels / t.median_ms);
                    std::printf("%s %s %dx%d x%d K=%d %s: %.3f ms (%.2f of single, %.2f of floor)\n", prop.name,
                                to_string(p), z.width, z.height, count, k, form, t.median_ms,
                                px / t.median_ms / single_rate, floor_ms * px / pixels / t.median_ms);
                };
                row("batch", batch_t, pixels, to_string(plan.dispatch().algorithm),
                    same ? "ok" : "mismatch: batch differs from the loop");
                row("loop", loop_t, pixels, to_string(plan.dispatch().algorithm), "ok");
                row("single", single_t, double(large.width) * large.height, to_string(large_plan.dispatch().algorithm),
                    "ok");
                checkpoint();
            }
        }
    }
}

}  // namespace halconv::bench
