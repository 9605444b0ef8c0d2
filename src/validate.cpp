// Checks run before any launch, and the rank-1 test.
#include <Eigen/Dense>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <sstream>
#include <type_traits>
#include <utility>

#include "halconv/float16.h"
#include "internal.h"

namespace halconv::internal {

PrecisionTypes types_of(Precision precision) {
    switch (precision) {
        case Precision::f64:
            return {halide_type_of<double>(), halide_type_of<double>()};
        case Precision::f32:
            return {halide_type_of<float>(), halide_type_of<float>()};
        case Precision::f16:
            return {halide_type_t(halide_type_float, 16), halide_type_t(halide_type_float, 16)};
        case Precision::f16f32:
            return {halide_type_t(halide_type_float, 16), halide_type_of<float>()};
    }
    throw Error(ErrorCode::invalid_argument, "unknown precision " + std::to_string(static_cast<int>(precision)) +
                                                 "; allowed: f64, f32, f16, f16f32");
}

std::string type_name(halide_type_t type) {
    std::ostringstream s;
    switch (type.code) {
        case halide_type_int:
            s << "int";
            break;
        case halide_type_uint:
            s << "uint";
            break;
        case halide_type_float:
            s << "float";
            break;
        default:
            s << "type" << int(type.code) << "_";
    }
    s << int(type.bits);
    if (type.lanes != 1) {
        s << "x" << type.lanes;
    }
    return s.str();
}

double unit_roundoff(Precision precision) {
    switch (precision) {
        case Precision::f64:
            return 0x1p-53;
        case Precision::f32:
            return 0x1p-24;
        case Precision::f16:
        case Precision::f16f32:
            return 0x1p-11;
    }
    return 0.0;
}

void check_buffer(const halide_buffer_t *buf, const char *role, int dims, halide_type_t type, Precision precision) {
    const auto invalid = [](const std::string &message) { return Error(ErrorCode::invalid_argument, message); };
    if (buf == nullptr) {
        throw invalid(std::string(role) + " is a null buffer");
    }
    if (buf->dimensions != dims) {
        throw invalid(std::string(role) + " has " + std::to_string(buf->dimensions) + " dimensions; it must have " +
                      std::to_string(dims) + (dims == 2 ? " (x = width, y = height)" : ""));
    }
    for (int d = 0; d < dims; d++) {
        if (buf->dim[d].extent <= 0) {
            throw invalid(std::string(role) + " is empty (extent " + std::to_string(buf->dim[d].extent) +
                          " in dimension " + std::to_string(d) + "); every extent must be at least 1");
        }
    }
    if (!(buf->type == type)) {
        throw invalid(std::string(role) + " holds " + type_name(buf->type) + " but precision " + to_string(precision) +
                      " needs " + type_name(type));
    }
    if (buf->host == nullptr && buf->device == 0) {
        throw invalid(std::string(role) + " has neither host nor device memory");
    }
}

void check_image_buffer(const halide_buffer_t *buf, const char *role, halide_type_t type, Precision precision) {
    if (buf != nullptr && buf->dimensions != 2 && buf->dimensions != 3) {
        throw Error(ErrorCode::invalid_argument, std::string(role) + " has " + std::to_string(buf->dimensions) +
                                                     " dimensions; it must have 2 (x = width, y = height) or 3 (x, y, "
                                                     "n: a batch of n images of one extent)");
    }
    check_buffer(buf, role, buf == nullptr ? 2 : buf->dimensions, type, precision);
}

void check_unit_stride(const halide_buffer_t *buf, const char *role) {
    if (buf->dim[0].stride != 1) {
        throw Error(ErrorCode::invalid_argument,
                    std::string(role) + " has stride " + std::to_string(buf->dim[0].stride) +
                        " along x; halconv needs adjacent elements along x (stride 1; rows may have any stride): "
                        "copy a transposed or subsampled view into a dense buffer first");
    }
}

namespace {

// The bytes [first, last) a buffer's elements span from its base address.
std::pair<int64_t, int64_t> span_of(const halide_buffer_t *b) {
    int64_t first = 0, last = 0;
    for (int d = 0; d < b->dimensions; d++) {
        const int64_t reach = int64_t(b->dim[d].stride) * (b->dim[d].extent - 1);
        (reach < 0 ? first : last) += reach;
    }
    const int64_t bytes = b->type.bytes();
    return {first * bytes, (last + 1) * bytes};
}

bool overlap(uintptr_t a, const halide_buffer_t *ab, uintptr_t b, const halide_buffer_t *bb) {
    const auto [a0, a1] = span_of(ab);
    const auto [b0, b1] = span_of(bb);
    return int64_t(a) + a0 < int64_t(b) + b1 && int64_t(b) + b0 < int64_t(a) + a1;
}

}  // namespace

void check_no_overlap(const halide_buffer_t *input, const char *input_role, const halide_buffer_t *output,
                      const char *output_role) {
    const bool host = input->host != nullptr && output->host != nullptr &&
                      overlap(uintptr_t(input->host), input, uintptr_t(output->host), output);
    const bool device = input->device != 0 && output->device != 0 &&
                        input->device_interface == output->device_interface &&
                        overlap(uintptr_t(input->device), input, uintptr_t(output->device), output);
    if (host || device) {
        throw Error(ErrorCode::invalid_argument,
                    std::string(output_role) + " overlaps the " + input_role + " in " + (host ? "host" : "device") +
                        " memory; halconv does not filter in place (the pipelines read the " + input_role +
                        " while writing the " + output_role + "): write into a separate buffer");
    }
}

namespace {

// Calls visit(e, value) for every element e (dimension 0 fastest) of a host view of buf
// as float64, throwing on the first non-finite one.
template <typename Visit>
void scan_finite_host_values(halide_buffer_t *buf, const char *role, Visit &&visit) {
    // A host view of the values: the buffer's own host memory when current, else a copy
    // (from the device when that is where the data lives).
    Halide::Runtime::Buffer<> host_view;
    if (buf->host != nullptr && !buf->device_dirty()) {
        host_view = Halide::Runtime::Buffer<>(*buf);
    } else {
        std::vector<int> extents(buf->dimensions);
        for (int d = 0; d < buf->dimensions; d++) {
            extents[d] = buf->dim[d].extent;
        }
        host_view = with_host_memory(Halide::Runtime::Buffer<>(buf->type, nullptr, extents));
        halide_buffer_t *dst = host_view.raw_buffer();
        for (int d = 0; d < buf->dimensions; d++) {
            dst->dim[d].min = buf->dim[d].min;
        }
        if (halide_buffer_copy(nullptr, buf, nullptr, dst) != 0) {
            throw Error(ErrorCode::device,
                        std::string("could not read ") + role + " back from the device: " + take_last_runtime_error());
        }
    }
    // Every element, in any number of dimensions, walking the strides (values are indexed
    // from 0): this runs on every call, so no per-element coordinate lookup.
    const int dims = host_view.dimensions();
    std::vector<int> extents(dims), index(dims, 0);
    std::vector<int64_t> strides(dims);
    for (int d = 0; d < dims; d++) {
        extents[d] = host_view.dim(d).extent();
        strides[d] = host_view.dim(d).stride();
    }
    const uint8_t *base = host_view.raw_buffer()->host;
    const int bytes = host_view.type().bytes();
    int64_t offset = 0;  // elements from the first one
    for (int64_t e = 0, n = static_cast<int64_t>(host_view.number_of_elements()); e < n; e++) {
        const uint8_t *ptr = base + offset * bytes;
        double v = 0.0;
        if (bytes == 8) {
            v = *reinterpret_cast<const double *>(ptr);
        } else if (bytes == 4) {
            v = *reinterpret_cast<const float *>(ptr);
        } else {
            v = double_from_float16_bits(*reinterpret_cast<const uint16_t *>(ptr));
        }
        if (!std::isfinite(v)) {
            std::string at;
            for (int d = 0; d < dims; d++) {
                at += (d ? ", " : "") + std::to_string(index[d]);
            }
            throw Error(ErrorCode::invalid_argument,
                        std::string(role) + " holds a non-finite coefficient (" + std::to_string(v) + ") at (" + at +
                            "); kernels must be finite (NaN/Inf would make every output non-finite)");
        }
        visit(e, v);
        for (int d = 0; d < dims; d++) {
            offset += strides[d];
            if (++index[d] < extents[d]) {
                break;
            }
            offset -= strides[d] * extents[d];
            index[d] = 0;
        }
    }
}

}  // namespace

void *checked_host_alloc(size_t bytes) {
    void *p = std::malloc(bytes);
    if (p == nullptr) {
        throw Error(ErrorCode::out_of_memory,
                    "out of host memory: a buffer of " + std::to_string(bytes) + " bytes could not be allocated");
    }
    return p;
}

namespace {

template <typename T>
double max_magnitude_rows(const halide_buffer_t *buf) {
    const int width = buf->dim[0].extent, height = buf->dim[1].extent;
    const int64_t stride = buf->dim[1].stride;
    const T *base = reinterpret_cast<const T *>(buf->host);
    float largest = 0.0f;  // float arithmetic vectorizes; f64 values compare as doubles below
    double largest64 = 0.0;
    bool finite = true;
    for (int y = 0; y < height; y++) {
        const T *row = base + y * stride;
        if constexpr (std::is_same_v<T, double>) {
            for (int x = 0; x < width; x++) {
                const double a = std::abs(row[x]);
                finite &= a <= std::numeric_limits<double>::max();  // false for NaN and inf
                largest64 = a > largest64 ? a : largest64;
            }
        } else {
            for (int x = 0; x < width; x++) {
                const float a = std::abs(static_cast<float>(row[x]));
                finite &= a <= std::numeric_limits<float>::max();
                largest = a > largest ? a : largest;
            }
        }
    }
    if (!finite) {
        return std::numeric_limits<double>::infinity();
    }
    return std::is_same_v<T, double> ? largest64 : double(largest);
}

}  // namespace

double max_magnitude_2d(const halide_buffer_t *buf) {
    switch (buf->type.bits) {
        case 64:
            return max_magnitude_rows<double>(buf);
        case 32:
            return max_magnitude_rows<float>(buf);
        default:
            return max_magnitude_rows<_Float16>(buf);
    }
}

Halide::Runtime::Buffer<double> finite_host_values(halide_buffer_t *buf, const char *role) {
    std::vector<int> extents(buf->dimensions);
    for (int d = 0; d < buf->dimensions; d++) {
        extents[d] = buf->dim[d].extent;
    }
    Halide::Runtime::Buffer<double> values = with_host_memory(Halide::Runtime::Buffer<double>(nullptr, extents));
    double *out = values.data();
    scan_finite_host_values(buf, role, [out](int64_t e, double v) { out[e] = v; });
    return values;
}

void check_finite_host_values(halide_buffer_t *buf, const char *role) {
    scan_finite_host_values(buf, role, [](int64_t, double) {});
}

Halide::Runtime::Buffer<> storage_buffer(const std::vector<double> &values, int width, int height, int dims,
                                         Precision precision) {
    const PrecisionTypes t = types_of(precision);
    Halide::Runtime::Buffer<> b =
        with_host_memory(dims == 1 ? Halide::Runtime::Buffer<>(t.storage, nullptr, width)
                                   : Halide::Runtime::Buffer<>(t.storage, nullptr, width, height));
    for (size_t i = 0; i < values.size(); i++) {
        void *p = b.raw_buffer()->host + i * t.storage.bytes();
        if (precision == Precision::f64) {
            *static_cast<double *>(p) = values[i];
        } else if (precision == Precision::f32) {
            *static_cast<float *>(p) = static_cast<float>(values[i]);
        } else {
            *static_cast<uint16_t *>(p) = float16_bits_from_double(values[i]);
        }
    }
    b.set_host_dirty();
    return b;
}

}  // namespace halconv::internal

namespace halconv {

double rank1_tolerance(Precision precision) {
    return low_rank_tolerance(precision, 1);
}

double low_rank_tolerance(Precision precision, int rank) {
    // 64 float64 ulps per term: the rounding floor of the float64 factorization itself.
    return 4.0 * internal::unit_roundoff(precision) + 64.0 * std::max(rank, 1) * 0x1p-53;
}

double rank1_relative_residual(const Halide::Runtime::Buffer<const double, 2> &kernel) {
    return internal::rank1_factorize(kernel, nullptr, nullptr);
}

LowRankFactors low_rank_factors(const Halide::Runtime::Buffer<const double, 2> &kernel, Precision precision) {
    internal::check_precision(precision);
    if (kernel.dimensions() != 2 || kernel.dim(0).extent() < 1 || kernel.dim(1).extent() < 1) {
        throw Error(ErrorCode::invalid_argument, "low_rank_factors: the kernel must be a 2D buffer of at least 1 x 1");
    }
    internal::check_finite_host_values(const_cast<halide_buffer_t *>(kernel.raw_buffer()), "kernel");
    return internal::low_rank_factorize(kernel, precision, max_low_rank);
}

}  // namespace halconv

namespace halconv::internal {

double rank1_factorize(const Halide::Runtime::Buffer<const double, 2> &kernel, std::vector<double> *row,
                       std::vector<double> *col) {
    using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
    const int w = kernel.dim(0).extent(), h = kernel.dim(1).extent();
    // K as an h x w matrix (row j = kernel row y0 + j), over the buffer's own memory.
    const Eigen::Map<const Matrix, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>> k(
        kernel.data(), h, w,
        Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(kernel.dim(1).stride(), kernel.dim(0).stride()));
    const double norm2 = k.squaredNorm();
    if (norm2 == 0.0) {
        // The zero kernel is rank 0: trivially separable.
        if (row != nullptr) {
            row->assign(w, 0.0);
            col->assign(h, 0.0);
        }
        return 0.0;
    }
    // Only the leading singular triplet is needed, on every default call: power iteration
    // on K^T K (microseconds; a full SVD takes milliseconds at 127 x 127, a second at
    // 1023 x 1023), started from the row of largest norm so that a rank-1 kernel
    // converges at once.
    Eigen::Index best_row = 0;
    k.rowwise().squaredNorm().maxCoeff(&best_row);
    Eigen::VectorXd v = k.row(best_row).transpose().normalized();
    for (int iteration = 0; iteration < 200; iteration++) {
        const Eigen::VectorXd next = (k.transpose() * (k * v)).normalized();
        const double change = (next - v).lpNorm<1>();
        v = next;
        if (change < 1e-15 * w) {
            break;
        }
    }
    // Best rank-1 approximation u v^T with u = K v; residual computed explicitly.
    const Eigen::VectorXd u = k * v;
    const double residual2 = (k - u * v.transpose()).squaredNorm();
    if (row != nullptr) {
        // Split the scale evenly so neither factor under- or overflows a narrow type.
        const double scale = std::sqrt(u.norm());
        row->resize(size_t(w));
        col->resize(size_t(h));
        Eigen::Map<Eigen::VectorXd>(row->data(), w) = v * scale;
        Eigen::Map<Eigen::VectorXd>(col->data(), h) = u / scale;
    }
    return std::sqrt(residual2 / norm2);
}

LowRankFactors low_rank_factorize(const Halide::Runtime::Buffer<const double, 2> &kernel, Precision precision,
                                  int max_rank) {
    using Matrix = Eigen::MatrixXd;
    const int w = kernel.dim(0).extent(), h = kernel.dim(1).extent();
    // K as an h x w matrix (row j = kernel row y0 + j).
    const Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0,
                     Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>>
        mapped(kernel.data(), h, w,
               Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(kernel.dim(1).stride(), kernel.dim(0).stride()));
    const Matrix k = mapped;
    const double norm = k.norm();
    LowRankFactors f;
    if (norm == 0.0) {
        f.rank = 1;  // the zero kernel: one zero term
        f.row_factors.assign(size_t(w), 0.0);
        f.col_factors.assign(size_t(h), 0.0);
        return f;
    }
    // The leading singular triplets by a randomized range finder with one power
    // iteration (Halko, Martinsson, Tropp 2011): O(w h b) where a full SVD is O(w h min(w, h))
    // (a second at 1023 x 1023), and exact when b reaches min(w, h). An inexact triplet can
    // only make the residual below larger, never pass a kernel the tolerance refuses. The
    // start is fixed (std::mt19937_64 is specified bit for bit), so plans decide alike.
    constexpr int oversampling = 4;
    const int b = std::min({max_rank + oversampling, w, h});
    std::mt19937_64 rng(20261126);
    Matrix omega(w, b);
    for (Eigen::Index i = 0; i < omega.size(); i++) {
        omega.data()[i] = double(rng() >> 11) * 0x1p-53 - 0.5;
    }
    const auto orthonormal = [](const Matrix &y) {
        const Eigen::HouseholderQR<Matrix> qr(y);
        return Matrix(qr.householderQ() * Matrix::Identity(y.rows(), y.cols()));
    };
    Matrix q = orthonormal(k * omega);
    q = orthonormal(k * orthonormal(k.transpose() * q));
    const Eigen::JacobiSVD<Matrix> svd(Matrix(q.transpose() * k), Eigen::ComputeThinU | Eigen::ComputeThinV);
    const Matrix u = q * svd.matrixU();  // h x b
    const Matrix &v = svd.matrixV();     // w x b
    const Eigen::VectorXd &sigma = svd.singularValues();
    // The residual of each rank computed from the factors themselves (not as the tail of
    // the singular values, which cancels to nothing near float64's rounding).
    Matrix residual = k;
    const int most = std::min(max_rank, int(sigma.size()));
    for (int r = 1; r <= most; r++) {
        residual.noalias() -= sigma(r - 1) * u.col(r - 1) * v.col(r - 1).transpose();
        f.relative_residual = residual.norm() / norm;
        if (f.relative_residual <= low_rank_tolerance(precision, r)) {
            f.rank = r;
            f.row_factors.resize(size_t(r) * size_t(w));
            f.col_factors.resize(size_t(r) * size_t(h));
            for (int t = 0; t < r; t++) {
                // Split each term's scale evenly so neither factor under- or overflows a narrow type.
                const double scale = std::sqrt(sigma(t));
                Eigen::Map<Eigen::VectorXd>(f.row_factors.data() + size_t(t) * size_t(w), w) = v.col(t) * scale;
                Eigen::Map<Eigen::VectorXd>(f.col_factors.data() + size_t(t) * size_t(h), h) = u.col(t) * scale;
            }
            return f;
        }
    }
    return f;
}

}  // namespace halconv::internal
