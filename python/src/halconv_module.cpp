// halconv._halconv: the C++ library under the Python package (python/halconv/). The
// Python side turns SciPy-style calls into options and array descriptions; this module
// wraps each array's memory (host or CUDA device, never copied here) in a Halide buffer,
// runs the call with the GIL released, and turns halconv::Error into the package's
// exception types.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "halconv/halconv.h"

#if HALCONV_PYTHON_WITH_CUDA
#include <cuda_runtime.h>
#endif

namespace nb = nanobind;
using namespace nb::literals;

namespace halconv::python {
namespace {

// One array as the Python side describes it: its data pointer, NumPy-order shape and
// strides (in elements), element type, and where it lives (-1: host, else a CUDA ordinal).
struct ArrayArg {
    uintptr_t data = 0;
    std::vector<int64_t> shape;
    std::vector<int64_t> strides;
    std::string dtype;  // "f2", "f4", "f8", "u1", "u2"
    int device = -1;
};

halide_type_t halide_type_of_dtype(const std::string &dtype) {
    if (dtype == "f2") return halide_type_t(halide_type_float, 16);
    if (dtype == "f4") return halide_type_t(halide_type_float, 32);
    if (dtype == "f8") return halide_type_t(halide_type_float, 64);
    if (dtype == "u1") return halide_type_t(halide_type_uint, 8);
    if (dtype == "u2") return halide_type_t(halide_type_uint, 16);
    throw Error(ErrorCode::invalid_argument, "unsupported element type " + dtype);
}

// A Halide buffer over the array's memory, dimensions reversed (NumPy's last axis is
// Halide's x). Halide's extents and strides are 32-bit: larger arrays are refused here
// rather than wrapped around.
Halide::Runtime::Buffer<> wrap(const ArrayArg &a, const char *role) {
    const int dims = static_cast<int>(a.shape.size());
    if (dims < 1 || dims > 4 || a.strides.size() != a.shape.size()) {
        throw Error(ErrorCode::internal, std::string(role) + ": malformed array description");
    }
    std::vector<halide_dimension_t> shape(static_cast<size_t>(dims));
    for (int d = 0; d < dims; d++) {
        const int64_t extent = a.shape[size_t(dims - 1 - d)], stride = a.strides[size_t(dims - 1 - d)];
        if (extent > INT32_MAX || stride > INT32_MAX || stride < INT32_MIN) {
            throw Error(ErrorCode::unsupported,
                        std::string(role) + " has an extent or stride beyond 2^31 - 1 elements");
        }
        shape[size_t(d)] = halide_dimension_t(0, int32_t(extent), int32_t(stride));
    }
    const halide_type_t type = halide_type_of_dtype(a.dtype);
    if (a.device < 0) {
        return Halide::Runtime::Buffer<>(type, reinterpret_cast<void *>(a.data), dims, shape.data());
    }
    Halide::Runtime::Buffer<> b(type, nullptr, dims, shape.data());
    if (cuda_device_interface() == nullptr) {
        throw Error(ErrorCode::unsupported,
                    std::string(role) + " is in CUDA memory but this halconv was built without CUDA");
    }
    if (b.device_wrap_native(cuda_device_interface(), uint64_t(a.data)) != 0) {
        throw Error(ErrorCode::device, std::string(role) + ": Halide could not wrap its CUDA memory");
    }
    b.set_device_dirty(true);
    return b;
}

// Device-resident buffers are wrapped, not owned: detach them before Halide's Buffer
// would free their memory. Host buffers that a CUDA run gave a device copy get their
// result back and that copy freed when the Buffer goes.
struct Wrapped {
    Halide::Runtime::Buffer<> buffer;
    bool native = false;
    Wrapped(const ArrayArg &a, const char *role) : buffer(wrap(a, role)), native(a.device >= 0) {}
    Wrapped(const Wrapped &) = delete;
    Wrapped &operator=(const Wrapped &) = delete;
    ~Wrapped() {
        if (native) {
            buffer.device_detach_native();
        }
    }
    halide_buffer_t *raw() { return buffer.raw_buffer(); }
};

// The result of a host output that a CUDA run left on the device.
void finish_output(Wrapped &out) {
    if (!out.native && out.buffer.has_device_allocation()) {
        if (out.buffer.device_dirty() && out.buffer.copy_to_host() != 0) {
            throw Error(ErrorCode::device, "could not copy the output back to the host");
        }
        out.buffer.device_free();
    }
}

// Makes the arrays' CUDA device current for the call (a plan belongs to the current
// device), and restores the caller's afterwards.
class DeviceScope {
public:
    explicit DeviceScope(int device) {
#if HALCONV_PYTHON_WITH_CUDA
        if (device >= 0 && cudaGetDevice(&previous_) == cudaSuccess && previous_ != device) {
            if (cudaSetDevice(device) != cudaSuccess) {
                throw Error(ErrorCode::device, "could not make CUDA device " + std::to_string(device) + " current");
            }
            restore_ = true;
        }
#else
        (void)device;
#endif
    }
    DeviceScope(const DeviceScope &) = delete;
    DeviceScope &operator=(const DeviceScope &) = delete;
    ~DeviceScope() {
#if HALCONV_PYTHON_WITH_CUDA
        if (restore_) {
            cudaSetDevice(previous_);
        }
#endif
    }

private:
    int previous_ = 0;
    bool restore_ = false;
};

int device_of(std::initializer_list<const ArrayArg *> arrays) {
    for (const ArrayArg *a : arrays) {
        if (a != nullptr && a->device >= 0) {
            return a->device;
        }
    }
    return -1;
}

// Every name of an enum, indexed by value: the C++ library's to_string is the one list.
template <typename E>
std::vector<std::string> names_of() {
    std::vector<std::string> names;
    for (int v = 0;; v++) {
        const std::string name = to_string(static_cast<E>(v));
        if (name == "?") {
            return names;
        }
        names.push_back(name);
    }
}

template <typename E>
E enum_from(const nb::dict &d, const char *key, E fallback) {
    return d.contains(key) ? static_cast<E>(nb::cast<int>(d[key])) : fallback;
}

template <typename T>
T value_from(const nb::dict &d, const char *key, T fallback) {
    return d.contains(key) ? nb::cast<T>(d[key]) : fallback;
}

Stream stream_from(const nb::dict &d) {
    return reinterpret_cast<Stream>(value_from<uintptr_t>(d, "stream", 0));
}

// The fields every options struct of a filter has (Options, BilateralOptions,
// MultichannelOptions), from the Python side's dict; absent keys keep the C++ defaults.
template <typename O>
O filter_options_from(const nb::dict &d) {
    O o;
    o.algorithm = enum_from(d, "algorithm", o.algorithm);
    o.precision = enum_from(d, "precision", o.precision);
    o.boundary = enum_from(d, "boundary", o.boundary);
    o.fill_value = value_from(d, "fill_value", o.fill_value);
    o.device = enum_from(d, "device", o.device);
    o.stream = stream_from(d);
    return o;
}

Options options_from(const nb::dict &d) {
    Options o = filter_options_from<Options>(d);
    o.mode = enum_from(d, "mode", o.mode);
    o.bands.banding = enum_from(d, "banding", o.bands.banding);
    o.origin_x = value_from(d, "origin_x", o.origin_x);
    o.origin_y = value_from(d, "origin_y", o.origin_y);
    o.batch_images = value_from(d, "batch_images", o.batch_images);
    return o;
}

PipelineOptions pipeline_options_from(const nb::dict &d) {
    PipelineOptions o;
    o.boundary = enum_from(d, "boundary", o.boundary);
    o.fill_value = value_from(d, "fill_value", o.fill_value);
    o.device = enum_from(d, "device", o.device);
    o.stream = stream_from(d);
    o.staging = enum_from(d, "staging", o.staging);
    return o;
}

nb::dict dispatch_dict(const Dispatch &d) {
    nb::dict r;
    r["device"] = to_string(d.device);
    r["algorithm"] = to_string(d.algorithm);
    r["variant"] = d.variant;
    r["reason"] = d.reason;
    return r;
}

nb::dict dict_of(std::initializer_list<std::pair<const char *, nb::object>> items) {
    nb::dict d;
    for (const auto &[key, value] : items) {
        d[key] = value;
    }
    return d;
}

// Runs `body` with the GIL released and the arrays' device current.
template <typename F>
auto run_released(int device, F &&body) {
    nb::gil_scoped_release release;
    DeviceScope scope(device);
    return body();
}

Extent2d extent_of(const std::vector<int64_t> &shape_hw) {
    if (shape_hw.size() != 2 || shape_hw[0] > INT32_MAX || shape_hw[1] > INT32_MAX) {
        throw Error(ErrorCode::invalid_argument, "an image shape is (rows, columns), each below 2^31");
    }
    return {int(shape_hw[1]), int(shape_hw[0])};
}

// halconv::Plan for Python: images described per call like the free functions'.
class PyPlan {
public:
    explicit PyPlan(Plan plan, int device) : plan_(std::move(plan)), device_(device) {}

    void run(const ArrayArg &image, const ArrayArg &out, uintptr_t stream) const {
        Wrapped in(image, "image"), o(out, "output");
        run_released(device_of({&image, &out}) >= 0 ? device_of({&image, &out}) : device_, [&] {
            plan_.run(in.raw(), o.raw(), reinterpret_cast<Stream>(stream));
            finish_output(o);
            return 0;
        });
    }

    nb::dict dispatch() const { return dispatch_dict(plan_.dispatch()); }
    std::vector<int64_t> output_shape() const {
        const Extent2d e = plan_.output_extent();
        return {e.height, e.width};
    }
    std::vector<int64_t> image_shape() const {
        const Extent2d e = plan_.image_extent();
        return {e.height, e.width};
    }
    size_t workspace_bytes() const { return plan_.workspace_bytes(); }
    std::string output_dtype() const {
        switch (plan_.options().precision) {
            case Precision::f64:
                return "f8";
            case Precision::f32:
            case Precision::f16f32:
                return "f4";
            case Precision::f16:
                return "f2";
        }
        return "?";
    }

private:
    Plan plan_;
    int device_;
};

// The package's exception classes by ErrorCode name (_set_error_types). A handle, not an
// object: a static object would be released after the interpreter has finalized.
nb::handle error_types;

}  // namespace
}  // namespace halconv::python

namespace nanobind::detail {
// ArrayArg from the Python side's tuple (data, shape, strides, dtype, device).
template <>
struct type_caster<halconv::python::ArrayArg> {
    NB_TYPE_CASTER(halconv::python::ArrayArg, const_name("ArrayArg"))
    bool from_python(handle src, uint8_t, cleanup_list *) noexcept {
        try {
            nb::tuple t = nb::cast<nb::tuple>(src);
            if (t.size() != 5) {
                return false;
            }
            value.data = nb::cast<uintptr_t>(t[0]);
            value.shape = nb::cast<std::vector<int64_t>>(t[1]);
            value.strides = nb::cast<std::vector<int64_t>>(t[2]);
            value.dtype = nb::cast<std::string>(t[3]);
            value.device = nb::cast<int>(t[4]);
            return true;
        } catch (...) {
            return false;
        }
    }
    static handle from_cpp(const halconv::python::ArrayArg &, rv_policy, cleanup_list *) noexcept { return {}; }
};
}  // namespace nanobind::detail

NB_MODULE(_halconv, m) {
    using namespace halconv;
    using namespace halconv::python;
    m.doc() = "halconv's C++ library; use the halconv package, not this module";

    nb::register_exception_translator([](const std::exception_ptr &p, void *) {
        try {
            std::rethrow_exception(p);
        } catch (const Error &e) {
            const char *code = to_string(e.code());
            if (error_types.is_valid() && nb::cast<nb::dict>(error_types).contains(code)) {
                nb::object type = nb::cast<nb::dict>(error_types)[code];
                PyErr_SetObject(type.ptr(), nb::str(e.what()).ptr());
            } else {
                PyErr_SetString(PyExc_RuntimeError, e.what());
            }
        }
    });
    m.def("_set_error_types", [](nb::dict types) {
        error_types.dec_ref();
        error_types = types.inc_ref();
    });

    m.def("names", [] {
        nb::dict d;
        d["mode"] = names_of<Mode>();
        d["boundary"] = names_of<Boundary>();
        d["precision"] = names_of<Precision>();
        d["device"] = names_of<Device>();
        d["algorithm"] = names_of<Algorithm>();
        d["staging"] = names_of<Staging>();
        d["multichannel_algorithm"] = names_of<MultichannelAlgorithm>();
        d["bilateral_algorithm"] = names_of<BilateralAlgorithm>();
        d["banding"] = names_of<Banding>();
        d["operation"] = names_of<Operation>();
        d["error_code"] = names_of<ErrorCode>();
        return d;
    });

    m.def("cuda_info", [] {
        const CudaInfo info = cuda_info();
        nb::dict d;
        d["built"] = info.built;
        d["runtime_version"] = info.runtime_version;
        d["driver_version"] = info.driver_version;
        d["unavailable_reason"] = info.unavailable_reason;
        nb::list devices;
        for (const CudaDevice &dev : info.devices) {
            devices.append(dict_of({{"ordinal", nb::cast(dev.ordinal)},
                                    {"name", nb::cast(dev.name)},
                                    {"compute_capability", nb::cast(nb::make_tuple(dev.compute_capability_major,
                                                                                   dev.compute_capability_minor))},
                                    {"multiprocessors", nb::cast(dev.multiprocessors)},
                                    {"memory_bytes", nb::cast(dev.memory_bytes)}}));
        }
        d["devices"] = devices;
        nb::list libraries;
        for (const CudaLibraryInfo &lib : info.libraries) {
            libraries.append(dict_of({{"name", nb::cast(lib.name)},
                                      {"file", nb::cast(lib.file)},
                                      {"path", nb::cast(lib.path)},
                                      {"unavailable_reason", nb::cast(lib.unavailable_reason)}}));
        }
        d["libraries"] = libraries;
        return d;
    });
    m.def("build_info", [] {
        const BuildInfo b = build_info();
        return dict_of({{"version", nb::cast(b.version)},
                        {"build_id", nb::cast(b.build_id)},
                        {"halide_version", nb::cast(b.halide_version)},
                        {"cpu_targets", nb::cast(b.cpu_targets)},
                        {"cuda_target", nb::cast(b.cuda_target)},
                        {"cuda_architectures", nb::cast(b.cuda_architectures)}});
    });

    m.def("output_shape", [](std::vector<int64_t> image, std::vector<int64_t> kernel, int mode) {
        const Extent2d e = output_extent(extent_of(image), extent_of(kernel), static_cast<Mode>(mode));
        return std::vector<int64_t>{e.height, e.width};
    });
    m.def("gaussian_taps", &gaussian_taps, "sigma"_a, "size"_a = 0);
    m.def("set_cpu_threads", &set_cpu_threads);
    m.def("cpu_threads", &cpu_threads);
    m.attr("max_cpu_threads") = max_cpu_threads;
    m.def("recursive_gaussian_error", &recursive_gaussian_error);

    m.def("correlate", [](const ArrayArg &image, const ArrayArg &kernel, const ArrayArg &out, int operation,
                          nb::dict options) {
        const Options o = options_from(options);
        Wrapped in(image, "image"), k(kernel, "kernel"), r(out, "output");
        return dispatch_dict(run_released(device_of({&image, &kernel, &out}), [&] {
            const Dispatch d = detail::correlate(in.raw(), k.raw(), r.raw(), o, static_cast<Operation>(operation));
            finish_output(r);
            return d;
        }));
    });
    m.def("separable", [](const ArrayArg &image, const ArrayArg &row, const ArrayArg &col, const ArrayArg &out,
                          int operation, nb::dict options) {
        const Options o = options_from(options);
        Wrapped in(image, "image"), rk(row, "row kernel"), ck(col, "column kernel"), r(out, "output");
        return dispatch_dict(run_released(device_of({&image, &row, &col, &out}), [&] {
            const Dispatch d = detail::correlate_separable(in.raw(), rk.raw(), ck.raw(), r.raw(), o,
                                                           static_cast<Operation>(operation));
            finish_output(r);
            return d;
        }));
    });
    m.def("gaussian", [](const ArrayArg &image, const ArrayArg &out, double sigma, int size, bool recursive,
                         nb::dict options) {
        const Options o = options_from(options);
        Wrapped in(image, "image"), r(out, "output");
        return dispatch_dict(run_released(device_of({&image, &out}), [&] {
            const Dispatch d = recursive ? detail::gaussian_blur(in.raw(), r.raw(), sigma, GaussianMethod::recursive, o)
                                         : detail::gaussian_blur(in.raw(), r.raw(), sigma, size, o);
            finish_output(r);
            return d;
        }));
    });
    m.def("detect_edges", [](const ArrayArg &image, const ArrayArg &out, double threshold, nb::dict options) {
        const PipelineOptions o = pipeline_options_from(options);
        Wrapped in(image, "image"), r(out, "edges");
        return std::string(to_string(run_released(device_of({&image, &out}), [&] {
            const Device d = detail::detect_edges(in.raw(), r.raw(), threshold, o);
            finish_output(r);
            return d;
        })));
    });
    m.def("unsharp_mask",
          [](const ArrayArg &image, const ArrayArg &kernel, const ArrayArg &out, double amount, nb::dict options) {
              const PipelineOptions o = pipeline_options_from(options);
              Wrapped in(image, "image"), k(kernel, "blur kernel"), r(out, "output");
              return std::string(to_string(run_released(device_of({&image, &kernel, &out}), [&] {
                  const Device d = detail::unsharp_mask(in.raw(), k.raw(), r.raw(), amount, o);
                  finish_output(r);
                  return d;
              })));
          });
    m.def("bilateral", [](const ArrayArg &image, const ArrayArg &out, double sigma_spatial, double sigma_range,
                          int radius, nb::dict options) {
        const auto o = filter_options_from<BilateralOptions>(options);
        Wrapped in(image, "image"), r(out, "output");
        const BilateralDispatch d = run_released(device_of({&image, &out}), [&] {
            const BilateralDispatch bd =
                detail::bilateral_filter(in.raw(), r.raw(), sigma_spatial, sigma_range, radius, o);
            finish_output(r);
            return bd;
        });
        return dict_of({{"device", nb::cast(to_string(d.device))},
                        {"algorithm", nb::cast(to_string(d.algorithm))},
                        {"variant", nb::cast(d.variant)},
                        {"radius", nb::cast(d.radius)}});
    });
    m.def("multichannel", [](const ArrayArg &image, const ArrayArg &kernels, const ArrayArg &out, bool flip,
                             nb::dict options) {
        auto o = filter_options_from<MultichannelOptions>(options);
        o.mode = enum_from(options, "mode", o.mode);
        Wrapped in(image, "image"), k(kernels, "kernels"), r(out, "output");
        const MultichannelDispatch d = run_released(device_of({&image, &kernels, &out}), [&] {
            const MultichannelDispatch md = detail::correlate_multichannel(in.raw(), k.raw(), r.raw(), o, flip);
            finish_output(r);
            return md;
        });
        return dict_of({{"device", nb::cast(to_string(d.device))}, {"algorithm", nb::cast(to_string(d.algorithm))}});
    });

    nb::class_<PyPlan>(m, "Plan")
        .def_static("create",
                    [](std::vector<int64_t> image_shape, const ArrayArg &kernel, int operation, nb::dict options) {
                        const Options o = options_from(options);
                        Wrapped k(kernel, "kernel");
                        return run_released(kernel.device, [&] {
                            return PyPlan(
                                Plan::create(extent_of(image_shape), k.raw(), o, static_cast<Operation>(operation)),
                                kernel.device);
                        });
                    })
        .def_static("create_separable",
                    [](std::vector<int64_t> image_shape, const ArrayArg &row, const ArrayArg &col, int operation,
                       nb::dict options) {
                        const Options o = options_from(options);
                        Wrapped rk(row, "row kernel"), ck(col, "column kernel");
                        const int device = device_of({&row, &col});
                        return run_released(device, [&] {
                            return PyPlan(Plan::create_separable(extent_of(image_shape), rk.raw(), ck.raw(), o,
                                                                 static_cast<Operation>(operation)),
                                          device);
                        });
                    })
        .def_static("create_gaussian",
                    [](std::vector<int64_t> image_shape, double sigma, int size, bool recursive, nb::dict options) {
                        const Options o = options_from(options);
                        return run_released(-1, [&] {
                            return PyPlan(
                                recursive ? Plan::gaussian(extent_of(image_shape), sigma, o, GaussianMethod::recursive)
                                          : Plan::gaussian(extent_of(image_shape), sigma, o, size),
                                -1);
                        });
                    })
        .def("run", &PyPlan::run, "image"_a, "out"_a, "stream"_a)
        .def_prop_ro("dispatch", &PyPlan::dispatch)
        .def_prop_ro("output_shape", &PyPlan::output_shape)
        .def_prop_ro("image_shape", &PyPlan::image_shape)
        .def_prop_ro("output_dtype", &PyPlan::output_dtype)
        .def_prop_ro("workspace_bytes", &PyPlan::workspace_bytes);
}
