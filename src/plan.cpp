// Plans: the request validated, the variant chosen (Auto included), the kernel prepared
// and the workspace sized once; run() checks the buffers and calls the pipeline.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string_view>
#include <tuple>

#include "bands.h"
#include "common/workspace_scope.h"
#include "contract.h"
#include "cost_model.h"
#include "fft/halconv_fft.h"
#include "geometry.h"
#include "internal.h"
#include "recursive/recursive_layout.h"
#include "registry.h"
#include "separable/separable_fft.h"
#include "separable/separable_tensor_core.h"
#include "single_channel/halconv_tc.h"
#include "workspace_pool.h"

namespace halconv {

namespace detail {

struct PlanState {
    Options options;
    Operation operation = Operation::correlate;
    Extent2d image, kernel, output;
    Dispatch dispatch;
    const internal::VariantRow *row = nullptr;
    // A transform row (finite_input) runs calls whose image holds NaN or Inf, or values
    // whose transforms could overflow (|x| above transform_limit), through `direct`.
    const internal::VariantRow *direct = nullptr;
    double transform_limit = 0.0;
    internal::PrecisionTypes types{};
    // The kernel as the pipeline takes it (storage type, dense, counted from 0): a 2D
    // buffer, or the row and column factors for the separable signature (1D) and the
    // low-rank one (2D: tap, rank; the 2D kernel kept too, for its band plans). On CUDA
    // each also holds its device copy (the pool's), clean: pipelines never re-upload it.
    Halide::Runtime::Buffer<> kernel2d, row_kernel, column_kernel;
    // The recursive Gaussian's coefficients and powers (float64, recursive_layout.h), held as the kernels.
    Halide::Runtime::Buffer<> coefficients, powers;
    // A workspace, in order: the extern stage's scratch, the boundary-extended image of
    // an extern stage's padded form, the autoscheduled output scratch.
    size_t extern_bytes = 0, extended_offset = 0, scratch_offset = 0;
    Extent2d extended;       // 0 x 0: none
    int extended_pitch = 0;  // elements between its rows: halconv_tc_tma_pitch (Hopper im2tensor)
    Extent2d scratch;        // autoscheduled outputs smaller than autoscheduled_min_extent run into this
    // The cuFFT stage's plans and the kernel's spectrum (fft on CUDA), made once.
    std::shared_ptr<rk::PreparedFft> fft;
    // The separable fft_lines stage's tables of the kernel (spectra, twiddles), made once
    // in the pool's memory.
    std::optional<rk::sep::FftLinesTables> fft_lines;
    // Device bytes those prepared objects hold beside the pool.
    size_t prepared_bytes = 0;
    // Row bands (bands.h): the valid-mode plans of the band slabs made so far, per device
    // (-1: the CPU) and band rows, and the lanes of the CUDA runs.
    struct BandPlan {
        int device = -1;
        int rows = 0;
        Plan plan;
    };
    mutable std::mutex band_mutex;
    mutable std::vector<BandPlan> band_plans;
    std::shared_ptr<internal::BandResources> band_resources = internal::make_band_resources();
    // Whether the row runs a batch in one launch (batch_in_one_launch): its batch form is
    // taken only then, the batch streams otherwise.
    bool batch_form_in_one_launch = false;
    // Batches on CUDA: the streams they spread over (rows not batched in one launch), made
    // on the first batch; the extended images of a batch form's call (tensor-core rows),
    // grown to the largest call so far (shared: a call keeps the pool it leased from).
    mutable std::mutex batch_mutex;
    mutable std::unique_ptr<internal::BatchStreams> batch_streams;
    mutable std::shared_ptr<internal::WorkspacePool> batch_extended_pool;
    // Last: destroyed first, it queues the frees of the device copies behind every use.
    std::unique_ptr<internal::WorkspacePool> pool;
};

}  // namespace detail

namespace internal {

void check_options(const Options &o) {
    check_mode(o.mode);
    check_boundary(o.boundary);
    check_precision(o.precision);
    if (!valid_algorithm(Api::correlate2d, static_cast<int>(o.algorithm))) {
        throw Error(ErrorCode::invalid_argument, "unknown algorithm " + std::to_string(int(o.algorithm)) +
                                                     "; allowed: auto, " + algorithm_list(Api::correlate2d));
    }
    check_device(o.device);
    if (o.batch_images < 1) {
        throw Error(ErrorCode::invalid_argument,
                    "batch_images is " + std::to_string(o.batch_images) + "; allowed: 1 or more (images per call)");
    }
    if ((o.origin_x != 0 || o.origin_y != 0) && o.mode != Mode::same) {
        throw Error(ErrorCode::invalid_argument, std::string("an origin (") + std::to_string(o.origin_x) + ", " +
                                                     std::to_string(o.origin_y) + ") with mode " + to_string(o.mode) +
                                                     "; the origin shifts mode same's kernel placement only");
    }
    const BandOptions &b = o.bands;
    if (static_cast<uint32_t>(b.banding) > static_cast<uint32_t>(Banding::never)) {
        throw Error(ErrorCode::invalid_argument,
                    "unknown banding " + std::to_string(int(b.banding)) + "; allowed: automatic, always, never");
    }
    if (b.band_rows < 0) {
        throw Error(ErrorCode::invalid_argument,
                    "bands.band_rows is " + std::to_string(b.band_rows) + "; allowed: 0 (chosen) or more");
    }
    if (b.streams_per_device < 0 || b.streams_per_device > band_max_streams) {
        throw Error(ErrorCode::invalid_argument, "bands.streams_per_device is " + std::to_string(b.streams_per_device) +
                                                     "; allowed: 0 (" + std::to_string(band_default_streams) + ") to " +
                                                     std::to_string(band_max_streams));
    }
    for (int d : b.devices) {
        if (d < 0) {
            throw Error(ErrorCode::invalid_argument,
                        "bands.devices names CUDA device " + std::to_string(d) + "; ordinals count from 0");
        }
    }
}

}  // namespace internal

namespace {

using detail::PlanState;
using internal::Api;
using internal::Request;
using internal::VariantRow;

bool has_limit(const VariantRow *row, internal::Limit wanted) {
    return std::find(std::begin(row->limits), std::end(row->limits), wanted) != std::end(row->limits);
}

std::vector<const VariantRow *> rows_anywhere(int value) {
    std::vector<const VariantRow *> rows = internal::rows_of(Api::correlate2d, value, Device::cpu);
    for (const VariantRow *r : internal::rows_of(Api::correlate2d, value, Device::cuda)) {
        rows.push_back(r);
    }
    return rows;
}

// The algorithms (any device) with a variant for `p`, for messages.
std::string algorithms_with(Precision p) {
    std::string list;
    for (const AlgorithmInfo &a : algorithms()) {
        if (std::find(a.precisions.begin(), a.precisions.end(), p) != a.precisions.end()) {
            list += (list.empty() ? "" : ", ") + a.name;
        }
    }
    return list;
}

struct Choice {
    const VariantRow *row = nullptr;
    Algorithm algorithm = Algorithm::naive;
    std::string reason;
};

// An algorithm the caller named: its first row on the resolved device that can run the
// request, or the error saying why none can.
Choice choose_requested(const Options &o, Request &r) {
    const int value = static_cast<int>(o.algorithm);
    const char *name = to_string(o.algorithm);
    if (o.device == Device::cuda) {
        internal::resolve_device(o.device);  // throws, saying why, where CUDA cannot run
    }
    const std::vector<const VariantRow *> anywhere = rows_anywhere(value);
    if (anywhere.empty()) {
        // The registry builds every CPU row: an algorithm without rows is a CUDA one.
        throw Error(ErrorCode::unsupported, std::string("algorithm ") + name + " runs on CUDA, and " +
                                                internal::cuda_unavailable_reason() + "; use " +
                                                internal::algorithm_list(Api::correlate2d, Device::cpu));
    }
    if (std::none_of(anywhere.begin(), anywhere.end(),
                     [&](const VariantRow *row) { return row->supports(o.precision); })) {
        std::string allowed;
        for (Precision p : {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32}) {
            if (std::any_of(anywhere.begin(), anywhere.end(),
                            [&](const VariantRow *row) { return row->supports(p); })) {
                allowed += std::string(allowed.empty() ? "" : " or ") + to_string(p);
            }
        }
        const bool tensor_cores = !anywhere.empty() && anywhere.front()->tensor_cores;
        throw Error(ErrorCode::unsupported,
                    std::string("algorithm ") + name +
                        (tensor_cores ? " runs on tensor cores: precision must be " : " supports precision ") +
                        allowed + ", not " + to_string(o.precision) +
                        (tensor_cores ? " (convert the image and kernel to one of those, or use " : " (or use ") +
                        algorithms_with(o.precision) + ")");
    }
    const bool on_cpu = !internal::rows_of(Api::correlate2d, value, Device::cpu).empty();
    const bool on_cuda = !internal::rows_of(Api::correlate2d, value, Device::cuda).empty();
    const std::string cpu_list = internal::algorithm_list(Api::correlate2d, Device::cpu);
    Device device = Device::cpu;
    if (o.device == Device::automatic) {
        if (on_cuda && cuda_available()) {
            device = Device::cuda;
        } else if (!on_cpu) {
            throw Error(ErrorCode::unsupported, std::string("algorithm ") + name +
                                                    " needs a CUDA device and none is usable here; use " + cpu_list +
                                                    " on the CPU");
        }
    } else if ((o.device == Device::cpu && !on_cpu) || (o.device == Device::cuda && !on_cuda)) {
        throw Error(ErrorCode::unsupported, std::string("algorithm ") + name + " runs on " +
                                                (on_cuda ? "CUDA" : "the CPU") + " only; use device " +
                                                (on_cuda ? "cuda" : "cpu") + " (or auto)" +
                                                (on_cuda ? ", or " + cpu_list + " on the CPU" : std::string()));
    } else {
        device = internal::resolve_device(o.device);
    }
    r.device = device;
    // Why none can: the first refusal of a row that has the precision, which says more
    // than another row's "no variant for precision".
    std::string why;
    bool why_has_precision = false;
    for (const VariantRow *row : internal::rows_of(Api::correlate2d, value, device)) {
        const std::string refusal = row->refusal(r);
        if (refusal.empty()) {
            return {row, o.algorithm, std::string("requested (algorithm ") + name + ")"};
        }
        if (why.empty() || (!why_has_precision && row->supports(o.precision))) {
            why = refusal;
            why_has_precision = row->supports(o.precision);
        }
    }
    throw Error(ErrorCode::unsupported, why);
}

// Whether a CUDA row runs a batch in one launch per group of images: its batch form
// (cmake/halconv_registry.cmake, BATCH_FORM), for the tensor cores only where
// contract::tensor_core_batch_in_one_launch holds (their other entries run the images one
// by one on one stream, which the plan's batch streams beat).
bool batch_in_one_launch(const VariantRow &row, Precision precision, Mode mode) {
    if (row.device != Device::cuda) {
        return false;
    }
    const internal::PipelineFns &fn = row.fns(precision);
    bool has_form = false;
    if (row.signature == internal::Signature::kernel2d) {
        has_form = fn.kernel2d_batch != nullptr;
    } else if (row.signature == internal::Signature::kernel2d_extended) {
        has_form = mode == Mode::valid ? fn.valid_batch != nullptr : fn.kernel2d_extended_batch != nullptr;
    }
    if (!has_form || !row.tensor_cores) {
        return has_form;
    }
    const auto [major, minor] = internal::current_compute_capability();
    return rk::contract::tensor_core_batch_in_one_launch(row.schedule, to_string(precision), major, minor);
}

// Algorithm::automatic: the fastest candidate by the device's cost table, among the
// rows `eligible` accepts.
Choice choose_automatic(
    const Options &o, Request &r, Extent2d image, Extent2d kernel,
    bool (*eligible)(const VariantRow &) = [](const VariantRow &) { return true; }) {
    r.device = internal::resolve_device(o.device);
    std::vector<internal::AutoCandidate> candidates;
    for (int value : internal::algorithms_on(Api::correlate2d, r.device)) {
        for (const VariantRow *row : internal::rows_of(Api::correlate2d, value, r.device)) {
            if (eligible(*row) && row->refusal(r).empty()) {
                candidates.push_back(
                    {static_cast<Algorithm>(value), row, batch_in_one_launch(*row, o.precision, o.mode)});
                break;
            }
        }
    }
    if (candidates.empty()) {
        throw Error(ErrorCode::unsupported,
                    std::string("no algorithm supports this request on device ") + to_string(r.device));
    }
    const internal::AutoRequest request{o.precision, o.mode, image, kernel, std::max(r.kernel_rank, 1), o.batch_images};
    const internal::AutoChoice c =
        internal::choose_fastest(candidates, request, *internal::cached_cost_table(identify_device(r.device)));
    return {candidates[c.index].row, candidates[c.index].algorithm, c.reason};
}

// Device copies of the plan's kernels and the workspace layout.
// Bytes of the recursive Gaussian's sums: float64 in f64, float32 otherwise (f16f32's too).
int recursive_sum_bytes(Precision p) {
    return p == Precision::f64 ? 8 : 4;
}

void finish(PlanState &s) {
    const bool cuda = s.dispatch.device == Device::cuda;
    const VariantRow &row = *s.row;
    s.batch_form_in_one_launch = batch_in_one_launch(row, s.options.precision, s.options.mode);
    size_t device_bytes = 0;
    if (row.signature == internal::Signature::kernel2d_extended) {
        if (row.tensor_cores) {
            s.extern_bytes =
                internal::tensor_core_workspace_bytes(row.schedule, to_string(s.options.precision), s.output.width,
                                                      s.output.height, s.kernel.width, s.kernel.height);
        } else if (std::string_view(row.generator) == "cufft") {
            s.fft = internal::prepare_fft(s.options.precision, s.output, s.kernel);
            const internal::FftFootprint f = internal::fft_footprint(*s.fft);
            s.extern_bytes = f.workspace_bytes;
            s.prepared_bytes = f.spectrum_bytes;
            s.dispatch.reason += "; " + f.tiling;
        } else {
            s.extern_bytes = SIZE_MAX;
        }
        if (s.extern_bytes == SIZE_MAX) {
            throw Error(ErrorCode::internal, std::string("no workspace size for extern variant ") + row.name());
        }
        device_bytes = rk::align_scratch(s.extern_bytes);
        if (s.options.mode != Mode::valid) {
            s.extended = {s.output.width + s.kernel.width - 1, s.output.height + s.kernel.height - 1};
            s.extended_pitch = int(halconv_tc_tma_pitch(s.extended.width, int64_t(s.types.storage.bytes())));
            s.extended_offset = device_bytes;
            device_bytes +=
                rk::align_scratch(size_t(s.extended_pitch) * size_t(s.extended.height) * s.types.storage.bytes());
        }
    }
    // The separable algorithm's CUDA extern stages, by their form (the row's schedule).
    const bool separable_extern =
        row.signature == internal::Signature::separable && cuda && std::string_view(row.generator) == "separable_cuda";
    const bool fft_lines = separable_extern && std::string_view(row.schedule) == "fft_lines";
    if (fft_lines) {
        // The intermediate (the output's width, the image's height): the tables are prepared below.
        s.extern_bytes =
            rk::sep::fft_lines_layout(s.output.width, s.output.height, s.image.height, s.kernel.width, s.kernel.height)
                .tables_offset;
        device_bytes = rk::align_scratch(s.extern_bytes);
    }
    if (separable_extern && std::string_view(row.schedule) == "tensor_core") {
        // The intermediate between the two passes (the output's width in lines of the image's height).
        s.extern_bytes = rk::sep::tensor_core_workspace_bytes(s.output.width, s.image.height);
        device_bytes = rk::align_scratch(s.extern_bytes);
    }
    if (row.signature == internal::Signature::recursive_gaussian && cuda) {
        s.extern_bytes = internal::recursive_gaussian_workspace_bytes(s.options.precision, s.image);
        if (s.extern_bytes == SIZE_MAX) {
            throw Error(ErrorCode::internal,
                        std::string("no recursive Gaussian workspace size for ") + to_string(s.options.precision));
        }
        device_bytes = rk::align_scratch(s.extern_bytes);
    }
    if (row.autoscheduled &&
        (s.output.width < autoscheduled_min_extent || s.output.height < autoscheduled_min_extent)) {
        s.scratch = {std::max(s.output.width, autoscheduled_min_extent),
                     std::max(s.output.height, autoscheduled_min_extent)};
        s.scratch_offset = device_bytes;
        device_bytes += rk::align_scratch(size_t(s.scratch.width) * size_t(s.scratch.height) * s.types.output.bytes());
    }
    s.pool = cuda ? internal::make_cuda_workspace_pool(device_bytes) : internal::make_host_workspace_pool(device_bytes);
    for (Halide::Runtime::Buffer<> *b : {&s.kernel2d, &s.row_kernel, &s.column_kernel, &s.coefficients, &s.powers}) {
        if (b->data() == nullptr) {
            continue;
        }
        b->set_host_dirty(false);
        if (cuda) {
            void *device = s.pool->upload(b->data(), b->size_in_bytes(), s.options.stream);
            if (b->device_wrap_native(cuda_device_interface(), reinterpret_cast<uintptr_t>(device)) != 0) {
                throw Error(ErrorCode::device,
                            "could not wrap the plan's kernel for Halide: " + internal::take_last_runtime_error());
            }
        }
    }
    if (s.fft) {
        internal::set_fft_kernel(*s.fft, s.kernel2d.raw_buffer(), s.operation == Operation::convolve, s.options.stream);
    }
    if (fft_lines) {
        s.fft_lines = internal::prepare_fft_lines(s.options.precision, s.row_kernel.raw_buffer(),
                                                  s.column_kernel.raw_buffer(), s.operation == Operation::convolve,
                                                  s.options.fill_value, s.output, *s.pool, s.options.stream);
        s.prepared_bytes +=
            rk::sep::fft_lines_tables_bytes(s.kernel.width, s.kernel.height, s.output.width, s.output.height);
    }
}

// The origin keeps every output sample under the kernel (options.h).
void check_origin(const PlanState &s) {
    const bool flip = s.operation == Operation::convolve;
    for (const auto &[k, origin, axis] :
         {std::tuple{s.kernel.width, s.options.origin_x, "x"}, std::tuple{s.kernel.height, s.options.origin_y, "y"}}) {
        const int centre = internal::mode_offset(k, s.options.mode, flip);
        if (origin < -centre || origin > k - 1 - centre) {
            throw Error(ErrorCode::invalid_argument, std::string("origin_") + axis + " " + std::to_string(origin) +
                                                         " for a kernel of " + std::to_string(k) + " taps along " +
                                                         axis + "; allowed: " + std::to_string(-centre) + " to " +
                                                         std::to_string(k - 1 - centre));
        }
    }
}

Extent2d checked_extent(Extent2d image, Extent2d kernel, Mode mode) {
    return output_extent(image, kernel, mode);  // throws for empty or mismatched extents
}

std::shared_ptr<PlanState> new_state(Extent2d image, const Options &o, Operation operation) {
    internal::check_options(o);
    if (static_cast<uint32_t>(operation) > 1) {
        throw Error(ErrorCode::invalid_argument,
                    "unknown operation " + std::to_string(int(operation)) + "; allowed: correlate, convolve");
    }
    auto s = std::make_shared<PlanState>();
    s->options = o;
    s->operation = operation;
    s->image = image;
    s->types = internal::types_of(o.precision);
    internal::install_runtime_hooks();
    return s;
}

}  // namespace

Plan Plan::create(Extent2d image, halide_buffer_t *kernel, const Options &o, Operation operation) {
    std::shared_ptr<PlanState> s = new_state(image, o, operation);
    internal::check_buffer(kernel, "kernel", 2, s->types.storage, o.precision);
    s->kernel = {kernel->dim[0].extent, kernel->dim[1].extent};
    s->output = checked_extent(image, s->kernel, o.mode);
    check_origin(*s);
    const Halide::Runtime::Buffer<double> values = internal::finite_host_values(kernel, "kernel");

    Request r{.precision = o.precision,
              .mode = o.mode,
              .boundary = o.boundary,
              .kernel_width = s->kernel.width,
              .kernel_height = s->kernel.height,
              .output_width = s->output.width,
              .output_height = s->output.height};
    const int value = static_cast<int>(o.algorithm);
    const std::vector<const VariantRow *> considered =
        o.algorithm == Algorithm::automatic ? std::vector<const VariantRow *>{} : rows_anywhere(value);
    const auto any_requires = [&](internal::Limit limit) {
        return o.algorithm == Algorithm::automatic ||
               std::any_of(considered.begin(), considered.end(),
                           [&](const VariantRow *v) { return has_limit(v, limit); });
    };
    std::vector<double> row, col;
    if (any_requires(internal::limit_rank1)) {
        r.rank1_residual = internal::rank1_factorize(values, &row, &col);
    }
    LowRankFactors factors;
    if (any_requires(internal::limit_low_rank)) {
        if (!row.empty() && r.rank1_residual <= rank1_tolerance(o.precision)) {
            // Rank 1 with the rank-1 test's factors; Auto sends such kernels to separable,
            // their own path, only a request for low_rank runs them here.
            if (o.algorithm != Algorithm::automatic) {
                factors = LowRankFactors{1, r.rank1_residual, row, col};
            }
        } else {
            factors = internal::low_rank_factorize(values, o.precision, max_low_rank);
        }
        r.kernel_rank = factors.rank;
        r.low_rank_residual = factors.relative_residual;
    }
    const Choice c =
        o.algorithm == Algorithm::automatic ? choose_automatic(o, r, image, s->kernel) : choose_requested(o, r);
    s->row = c.row;
    s->dispatch = {r.device, c.algorithm, c.row->name(), c.reason};
    if (c.row->finite_input) {
        // The fastest direct sum on the same device, for calls a transform cannot take.
        Options direct = o;
        direct.device = r.device;
        const Choice d = choose_automatic(direct, r, image, s->kernel, [](const VariantRow &candidate) {
            return candidate.signature == internal::Signature::kernel2d && !candidate.finite_input &&
                   !candidate.autoscheduled;
        });
        s->direct = d.row;
        s->dispatch.reason += std::string("; a call whose image holds NaN or Inf runs ") + d.row->name();
        double sum_abs = 0.0;
        for (size_t i = 0; i < values.number_of_elements(); i++) {
            sum_abs += std::abs(values.data()[i]);
        }
        const double tile = std::atof(c.row->schedule);
        s->transform_limit = rk::fft_transform_limit(tile * tile, sum_abs, o.precision == Precision::f64);
    }
    if (c.row->signature == internal::Signature::separable) {
        s->row_kernel = internal::storage_buffer(row, s->kernel.width, 1, 1, o.precision);
        s->column_kernel = internal::storage_buffer(col, s->kernel.height, 1, 1, o.precision);
    } else {
        if (c.row->signature == internal::Signature::low_rank) {
            s->row_kernel =
                internal::storage_buffer(factors.row_factors, s->kernel.width, factors.rank, 2, o.precision);
            s->column_kernel =
                internal::storage_buffer(factors.col_factors, s->kernel.height, factors.rank, 2, o.precision);
            s->dispatch.reason += "; kernel of rank " + std::to_string(factors.rank);
        }
        const std::vector<double> taps(values.data(), values.data() + values.number_of_elements());
        s->kernel2d = internal::storage_buffer(taps, s->kernel.width, s->kernel.height, 2, o.precision);
    }
    finish(*s);
    return Plan(std::move(s));
}

Plan Plan::create_separable(Extent2d image, halide_buffer_t *row_kernel, halide_buffer_t *col_kernel, const Options &o,
                            Operation operation) {
    std::shared_ptr<PlanState> s = new_state(image, o, operation);
    internal::check_buffer(row_kernel, "row kernel", 1, s->types.storage, o.precision);
    internal::check_buffer(col_kernel, "column kernel", 1, s->types.storage, o.precision);
    s->kernel = {row_kernel->dim[0].extent, col_kernel->dim[0].extent};
    s->output = checked_extent(image, s->kernel, o.mode);
    check_origin(*s);
    const Halide::Runtime::Buffer<double> row = internal::finite_host_values(row_kernel, "row kernel");
    const Halide::Runtime::Buffer<double> col = internal::finite_host_values(col_kernel, "column kernel");
    Request r{.device = internal::resolve_device(o.device),
              .precision = o.precision,
              .mode = o.mode,
              .boundary = o.boundary,
              .kernel_width = s->kernel.width,
              .kernel_height = s->kernel.height,
              .output_width = s->output.width,
              .output_height = s->output.height};
    std::string why = "no separable variant";
    for (const VariantRow *v : internal::rows_of(Api::correlate2d, static_cast<int>(Algorithm::separable), r.device)) {
        if (const std::string refusal = v->refusal(r); refusal.empty()) {
            s->row = v;
            break;
        } else {
            why = refusal;
        }
    }
    if (s->row == nullptr) {
        throw Error(ErrorCode::unsupported, why);
    }
    s->dispatch = {r.device, Algorithm::separable, s->row->name(), "the separable entry point"};
    s->row_kernel = internal::storage_buffer(std::vector<double>(row.data(), row.data() + row.number_of_elements()),
                                             s->kernel.width, 1, 1, o.precision);
    s->column_kernel = internal::storage_buffer(std::vector<double>(col.data(), col.data() + col.number_of_elements()),
                                                s->kernel.height, 1, 1, o.precision);
    finish(*s);
    return Plan(std::move(s));
}

Plan Plan::gaussian(Extent2d image, double sigma, const Options &options, int size) {
    internal::check_options(options);
    const std::vector<double> taps = gaussian_taps(sigma, size);
    Halide::Runtime::Buffer<> g =
        internal::storage_buffer(taps, static_cast<int>(taps.size()), 1, 1, options.precision);
    return create_separable(image, g.raw_buffer(), g.raw_buffer(), options, Operation::correlate);
}

Plan Plan::gaussian(Extent2d image, double sigma, const Options &o, GaussianMethod method) {
    if (method == GaussianMethod::exact) {
        return gaussian(image, sigma, o, 0);
    }
    if (method != GaussianMethod::recursive) {
        throw Error(ErrorCode::invalid_argument,
                    "unknown Gaussian method " + std::to_string(int(method)) + "; allowed: exact, recursive");
    }
    std::shared_ptr<PlanState> s = new_state(image, o, Operation::correlate);
    if (o.bands.banding == Banding::always) {
        throw Error(ErrorCode::unsupported,
                    "the recursive Gaussian does not run in row bands (each line's result depends on the whole "
                    "line); allowed: Banding::automatic or never");
    }
    // Automatic resolves to one pass, so run() needs no case of its own.
    s->options.bands.banding = Banding::never;
    if (o.mode != Mode::same) {
        throw Error(ErrorCode::unsupported, std::string("recursive Gaussian: mode ") + to_string(o.mode) +
                                                " has no meaning for a filter of unbounded size; allowed: same");
    }
    if (o.precision == Precision::f16) {
        throw Error(ErrorCode::unsupported,
                    "recursive Gaussian: precision f16 (float16 arithmetic) cannot carry the "
                    "recursion; allowed: f64, f32, f16f32 (float16 samples, float32 sums)");
    }
    if (o.origin_x != 0 || o.origin_y != 0) {
        throw Error(ErrorCode::unsupported,
                    "the recursive Gaussian has no origin (it is symmetric and unbounded); "
                    "allowed: origin (0, 0)");
    }
    s->kernel = {1, 1};
    s->output = checked_extent(image, s->kernel, o.mode);
    Request r{.device = internal::resolve_device(o.device),
              .precision = o.precision,
              .mode = o.mode,
              .boundary = o.boundary,
              .kernel_width = 1,
              .kernel_height = 1,
              .output_width = s->output.width,
              .output_height = s->output.height};
    const int value = internal::algorithms_on(Api::recursive_gaussian, r.device).front();
    const VariantRow &row = *internal::rows_of(Api::recursive_gaussian, value, r.device).front();
    if (const std::string refusal = row.refusal(r); !refusal.empty()) {
        throw Error(ErrorCode::unsupported, "recursive Gaussian: " + refusal);
    }
    const int sum_bytes = recursive_sum_bytes(o.precision);
    if (r.device == Device::cuda && std::max(image.width, image.height) > rk::rg::max_line(sum_bytes)) {
        throw Error(ErrorCode::unsupported,
                    "recursive Gaussian: a line of " + std::to_string(std::max(image.width, image.height)) +
                        " samples; allowed on device cuda up to " + std::to_string(rk::rg::max_line(sum_bytes)) +
                        " in precision " + to_string(o.precision) + " (device cpu takes any)");
    }
    internal::RecursiveCoefficients c =
        internal::recursive_gaussian_coefficients(sigma, image, o.boundary, sum_bytes == 4);
    s->row = &row;
    s->dispatch = {r.device, Algorithm::separable, row.name(), "the recursive Gaussian (GaussianMethod::recursive)"};
    s->coefficients = std::move(c.coefficients);
    s->powers = std::move(c.powers);
    finish(*s);
    return Plan(std::move(s));
}

const Dispatch &Plan::dispatch() const {
    return state_->dispatch;
}
const Options &Plan::options() const {
    return state_->options;
}
Operation Plan::operation() const {
    return state_->operation;
}
Extent2d Plan::image_extent() const {
    return state_->image;
}
Extent2d Plan::output_extent() const {
    return state_->output;
}
size_t Plan::workspace_bytes() const {
    return state_->dispatch.device == Device::cuda ? state_->pool->bytes() + state_->prepared_bytes : 0;
}

Halide::Runtime::Buffer<> Plan::allocate_output(int batch) const {
    const Extent2d e = state_->output;
    if (batch > 0) {
        return internal::with_host_memory(
            Halide::Runtime::Buffer<>(state_->types.output, nullptr, e.width, e.height, batch));
    }
    return internal::with_host_memory(Halide::Runtime::Buffer<>(state_->types.output, nullptr, e.width, e.height));
}

namespace {

// A 2D buffer of `type` over memory at `data`, on the device or the host, its dims from
// the mins, dense along x.
struct DenseView {
    halide_dimension_t dims[3];
    halide_buffer_t buffer{};
    // pitch: elements between rows, 0 for the width; images > 0: a batch (x, y, n) of that
    // many, one after another.
    DenseView(halide_type_t type, void *data, Device where, int min_x, int min_y, Extent2d extent, int pitch = 0,
              int images = 0) {
        dims[0] = {min_x, extent.width, 1, 0};
        dims[1] = {min_y, extent.height, pitch > 0 ? pitch : extent.width, 0};
        dims[2] = {0, images, dims[1].stride * extent.height, 0};
        if (where == Device::cuda) {
            buffer.device = reinterpret_cast<uintptr_t>(data);
            buffer.device_interface = cuda_device_interface();
        } else {
            buffer.host = static_cast<uint8_t *>(data);
        }
        buffer.type = type;
        buffer.dimensions = images > 0 ? 3 : 2;
        buffer.dim = dims;
    }
};

// Where output (x, y) reads the boundary-extended image from: (x - offset, y - offset), the
// mode's centre shifted by the origin.
int offset_x(const PlanState &s) {
    return internal::mode_offset(s.kernel.width, s.options.mode, s.operation == Operation::convolve) +
           s.options.origin_x;
}

int offset_y(const PlanState &s) {
    return internal::mode_offset(s.kernel.height, s.options.mode, s.operation == Operation::convolve) +
           s.options.origin_y;
}

// A kernel2d_extended row's pipeline on CUDA, the valid form in mode valid: for one image
// (images 0) or a batch of `images` (valid / extended the row's batch forms then), the
// boundary-extended images written at `extended_images` (the workspace's).
void run_extended_pipeline(const PlanState &s, internal::ValidFn valid, internal::Kernel2dExtendedFn extended,
                           halide_buffer_t *image, halide_buffer_t *kernel, halide_buffer_t *output,
                           void *extended_images, int images, Stream stream) {
    const Options &o = s.options;
    const bool flip = s.operation == Operation::convolve;
    const int ox = offset_x(s) + output->dim[0].min - image->dim[0].min;
    const int oy = offset_y(s) + output->dim[1].min - image->dim[1].min;
    internal::run_pipeline(
        Device::cuda, {image, kernel}, output, stream, s.row->tensor_cores ? "tensor-core pipeline" : "cuFFT pipeline",
        [&] {
            if (o.mode == Mode::valid) {
                // The extern stage reads the image from the output's min.
                return internal::with_output_at_image_mins(
                    image, output, [&](halide_buffer_t *placed) { return valid(image, kernel, flip, placed); });
            }
            DenseView extended_view(s.types.storage, extended_images, Device::cuda, output->dim[0].min,
                                    output->dim[1].min, s.extended, s.extended_pitch, images);
            return extended(image, kernel, static_cast<int32_t>(o.boundary), o.fill_value, ox, oy, flip, output,
                            &extended_view.buffer);
        });
}

void check_extent(const halide_buffer_t *b, Extent2d want, const char *role, const char *needs) {
    if (b->dim[0].extent != want.width || b->dim[1].extent != want.height) {
        throw Error(ErrorCode::invalid_argument,
                    std::string(role) + " is " + internal::shape_text(b->dim[0].extent, b->dim[1].extent) +
                        " (width x height) but " + needs + " " + internal::shape_text(want.width, want.height));
    }
}

// The autoscheduled pipeline into the scratch (same mins as the output), then its
// corner copied into the output: on the stream for CUDA.
template <typename Call>
void run_via_scratch(const PlanState &s, void *workspace, halide_buffer_t *image, halide_buffer_t *kernel,
                     halide_buffer_t *output, Stream stream, Call call) {
    const halide_type_t type = s.types.output;
    const int x0 = output->dim[0].min, y0 = output->dim[1].min;
    if (s.dispatch.device == Device::cpu) {
        DenseView scratch(type, static_cast<char *>(workspace) + s.scratch_offset, Device::cpu, x0, y0, s.scratch);
        internal::run_pipeline(Device::cpu, {image, kernel}, &scratch.buffer, stream, "conv2d pipeline",
                               [&] { return call(&scratch.buffer); });
        DenseView corner(type, scratch.buffer.host, Device::cpu, x0, y0, s.output);
        corner.dims[1].stride = s.scratch.width;
        internal::prepare_cpu({}, output);
        internal::check_call(halide_buffer_copy(nullptr, &corner.buffer, nullptr, output),
                             "copy from the autoscheduled scratch");
        internal::finish_cpu(output);
        return;
    }
    char *base = static_cast<char *>(workspace) + s.scratch_offset;
    DenseView scratch(type, base, Device::cuda, x0, y0, s.scratch);
    internal::run_pipeline(Device::cuda, {image, kernel}, &scratch.buffer, stream, "conv2d pipeline",
                           [&] { return call(&scratch.buffer); });
    internal::StreamScope scope(stream);
    if (output->device == 0) {
        internal::check_call(halide_device_malloc(nullptr, output, cuda_device_interface()),
                             "allocating the output on the device");
    }
    const size_t bytes = type.bytes();
    if (output->dim[0].stride == 1 && output->dim[1].stride >= output->dim[0].extent) {
        internal::copy_device_rows(reinterpret_cast<void *>(output->device), size_t(output->dim[1].stride) * bytes,
                                   base, size_t(s.scratch.width) * bytes, size_t(s.output.width) * bytes,
                                   size_t(s.output.height), stream);
    } else {
        // Halide's copy runs on the legacy default stream: wait for the pipeline first.
        DenseView corner(type, base, Device::cuda, x0, y0, s.output);
        corner.dims[1].stride = s.scratch.width;
        internal::synchronize_stream(stream);
        internal::check_call(halide_buffer_copy(nullptr, &corner.buffer, cuda_device_interface(), output),
                             "copy from the autoscheduled scratch");
    }
    output->flags = 0;
    output->set_device_dirty(true);
}

// The call on the device in bands of at most `rows` output rows, each a crop of the
// output (the pipeline computes each output sample from the whole image as it would in
// one call): for the autoscheduled GPU pipelines, whose schedule (Anderson2021's) may
// give each row of the output, or of an intermediate stage (the output's rows plus the
// kernel's halo), its own row of blocks: bands of a quarter of CUDA's limit
// (geometry.h, gpu_max_grid_y) leave that halo room.
constexpr int autoscheduled_band_rows = gpu_max_grid_y / 4;
// Streams a CUDA batch deals its images over where the row has no batch form: enough for
// the kernels of small images to fill the device side by side (each stream keeps its own
// workspace).
constexpr int batch_streams_per_plan = 4;
// The most device memory one call of a batch form takes for its images' extended copies
// (tensor-core rows); a call holds at least one image.
constexpr int64_t batch_extended_budget = int64_t(64) << 20;

template <typename Call>
void run_device_row_crops(halide_buffer_t *output, int rows, Call call) {
    if (output->device == 0) {
        internal::check_call(halide_device_malloc(nullptr, output, cuda_device_interface()),
                             "allocating the output on the device");
    }
    const int first = output->dim[1].min, height = output->dim[1].extent;
    for (int r = 0; r < height; r += rows) {
        halide_dimension_t dims[2] = {output->dim[0], output->dim[1]};
        dims[1].min = first + r;
        dims[1].extent = std::min(rows, height - r);
        halide_buffer_t crop = *output;
        crop.dim = dims;
        crop.flags = 0;
        crop.device = 0;
        crop.device_interface = nullptr;
        if (crop.host != nullptr) {
            crop.host += int64_t(r) * dims[1].stride * output->type.bytes();
        }
        internal::check_call(halide_device_crop(nullptr, output, &crop), "cropping the output on the device");
        const int result = call(&crop);
        halide_device_release_crop(nullptr, &crop);
        internal::check_call(result, "conv2d pipeline");
    }
    output->flags = 0;
    output->set_device_dirty(true);
}

// Whether this call can run the plan's row: always, unless the row is a transform and
// the image (or a constant boundary's fill) holds NaN, Inf or values beyond its range,
// which would spread over a whole tile instead of the outputs whose window holds them.
bool runs_as_transform(const PlanState &s, halide_buffer_t *image) {
    if (s.direct == nullptr) {
        return true;
    }
    const Options &o = s.options;
    if (o.boundary == Boundary::constant && !(std::abs(o.fill_value) <= s.transform_limit)) {
        return false;
    }
    if (s.dispatch.device != Device::cpu) {
        throw Error(ErrorCode::internal, std::string("no finite-input check for ") + s.row->name() + " on the GPU");
    }
    if (image->host == nullptr) {
        return true;  // the pipeline's own check refuses a device-only image on the CPU
    }
    if (image->device_dirty()) {
        internal::check_call(halide_copy_to_host(nullptr, image), "copying the image to the host");
    }
    return internal::max_magnitude_2d(image) <= s.transform_limit;
}

// The call in row bands: each band's slab filtered by a valid-mode plan of the same
// algorithm (for the CPU or the current CUDA device, made once per band height).
void run_in_bands(const PlanState &s, halide_buffer_t *image, halide_buffer_t *output, Stream stream) {
    const Options &o = s.options;
    internal::BandCall call;
    call.layout = internal::band_layout(s.image, s.kernel, s.output, offset_x(s), offset_y(s), s.types.storage.bytes(),
                                        s.types.output.bytes(), o.bands.band_rows,
                                        s.row->tensor_cores ? int(halconv_tc_row_phase) : 1,
                                        image->device != 0 ? internal::band_halo_ratio : 1);
    // Valid mode reads the caller's image as it is.
    call.layout.tma_rows =
        o.mode != Mode::valid ||
        halconv_tc_tma_rows(uintptr_t(image->device), int64_t(image->dim[1].stride) * s.types.storage.bytes());
    call.image = image;
    call.output = output;
    call.boundary = o.boundary;
    const Halide::Runtime::Buffer<> fill = internal::storage_buffer({o.fill_value}, 1, 1, 1, o.precision);
    std::memcpy(&call.fill_bits, fill.data(), s.types.storage.bytes());
    call.bands = o.bands;
    call.stream = stream;
    call.plan_for = [&s, layout = call.layout](int rows) {
        const int device = s.dispatch.device == Device::cuda ? internal::current_cuda_device() : -1;
        std::lock_guard<std::mutex> lock(s.band_mutex);
        for (const PlanState::BandPlan &p : s.band_plans) {
            if (p.device == device && p.rows == rows) {
                return p.plan;
            }
        }
        Options band = s.options;
        band.mode = Mode::valid;
        band.origin_x = band.origin_y = 0;  // the slabs already follow the shifted placement
        band.algorithm = s.dispatch.algorithm;
        band.device = s.dispatch.device;
        band.stream = nullptr;
        band.bands = BandOptions{};
        band.bands.banding = Banding::never;
        const Extent2d slab = layout.slab(rows);
        // The plan's kernels are only read: Plan::create takes them as the public buffers it copies.
        const Plan plan =
            s.row->signature == internal::Signature::separable
                ? Plan::create_separable(slab, const_cast<halide_buffer_t *>(s.row_kernel.raw_buffer()),
                                         const_cast<halide_buffer_t *>(s.column_kernel.raw_buffer()), band, s.operation)
                : Plan::create(slab, const_cast<halide_buffer_t *>(s.kernel2d.raw_buffer()), band, s.operation);
        s.band_plans.push_back({device, rows, plan});
        return plan;
    };
    if (s.dispatch.device == Device::cuda) {
        internal::run_bands_cuda(call, *s.band_resources);
    } else {
        internal::run_bands_cpu(call);
    }
    // Written where it lives: on the host, or in the device's memory.
    output->flags = 0;
    output->set_device_dirty(output->device != 0);
}

}  // namespace

void Plan::run(halide_buffer_t *image, halide_buffer_t *output, Stream stream) const {
    const PlanState &s = *state_;
    const Options &o = s.options;
    if (internal::needs_staging(image) || internal::needs_staging(output)) {
        run_staged(image, output, stream);
        return;
    }
    if (image != nullptr && image->dimensions == 3) {
        run_batch(image, output, stream);
        return;
    }
    internal::check_buffer(image, "image", 2, s.types.storage, o.precision);
    check_extent(image, s.image, "image", "this plan was made for");
    internal::check_buffer(output, "output", 2, s.types.output, o.precision);
    check_extent(output, s.output, "output", "this mode needs");
    internal::check_unit_stride(image, "image");
    internal::check_unit_stride(output, "output");
    internal::check_no_overlap(image, "image", output, "output");
    const bool flip = s.operation == Operation::convolve;
    const bool too_large = internal::exceeds_one_shot(s.image, s.kernel, s.output);
    if (internal::wants_bands(o, s.dispatch.device, image, output, workspace_bytes(), too_large)) {
        run_in_bands(s, image, output, stream);
        return;
    }
    if (too_large) {
        throw Error(ErrorCode::unsupported,
                    "a call on a " + internal::shape_text(s.image.width, s.image.height) + " image with a " +
                        internal::shape_text(s.kernel.width, s.kernel.height) +
                        " kernel needs buffers beyond the one-shot pipelines' 2^31 - 1 elements; " +
                        (o.bands.banding == Banding::never
                             ? std::string("Banding::automatic or always runs it in row bands")
                             : std::string("row bands run it with both buffers on the host or both in the "
                                           "CUDA device's memory")));
    }
    const int ox = offset_x(s) + output->dim[0].min - image->dim[0].min;
    const int oy = offset_y(s) + output->dim[1].min - image->dim[1].min;
    const Device device = s.dispatch.device;
    const int32_t boundary = static_cast<int32_t>(o.boundary);
    const internal::PipelineFns &fn =
        runs_as_transform(s, image) ? s.row->fns(o.precision) : s.direct->fns(o.precision);

    internal::WorkspacePool::Lease lease = s.pool->acquire(stream);
    rk::WorkspaceScope scope({lease.data(), s.extern_bytes, s.fft.get(), s.fft_lines ? &*s.fft_lines : nullptr});
    // Per-call copies: pipelines may update a buffer's flags, and other threads apply too.
    halide_buffer_t kernel2d = *s.kernel2d.raw_buffer();
    halide_buffer_t row = *s.row_kernel.raw_buffer();
    halide_buffer_t column = *s.column_kernel.raw_buffer();
    halide_buffer_t coefficients = *s.coefficients.raw_buffer();
    halide_buffer_t powers = *s.powers.raw_buffer();
    switch (s.row->signature) {
        case internal::Signature::kernel2d: {
            const auto call = [&](halide_buffer_t *out) {
                return fn.kernel2d(image, &kernel2d, boundary, o.fill_value, ox, oy, flip, out);
            };
            if (s.scratch.width > 0) {
                run_via_scratch(s, lease.data(), image, &kernel2d, output, stream, call);
            } else if (s.row->autoscheduled && device == Device::cuda && s.output.height > autoscheduled_band_rows) {
                internal::run_pipeline(device, {image, &kernel2d}, output, stream, "conv2d pipeline", [&] {
                    run_device_row_crops(output, autoscheduled_band_rows, call);
                    return 0;
                });
            } else {
                internal::run_pipeline(device, {image, &kernel2d}, output, stream, "conv2d pipeline",
                                       [&] { return call(output); });
            }
            break;
        }
        case internal::Signature::kernel2d_extended:
            run_extended_pipeline(s, fn.valid, fn.kernel2d_extended, image, &kernel2d, output,
                                  static_cast<char *>(lease.data()) + s.extended_offset, 0, stream);
            break;
        case internal::Signature::separable:
        case internal::Signature::low_rank: {
            const internal::SeparableFn pipeline =
                s.row->signature == internal::Signature::separable ? fn.separable : fn.low_rank;
            internal::run_pipeline(device, {image, &row, &column}, output, stream, "separable pipeline", [&] {
                return pipeline(image, &row, &column, boundary, o.fill_value, ox, oy, flip, output);
            });
            break;
        }
        case internal::Signature::recursive_gaussian:
            internal::run_pipeline(device, {image, &coefficients, &powers}, output, stream, "recursive Gaussian", [&] {
                return internal::with_output_at_image_mins(image, output, [&](halide_buffer_t *out) {
                    return fn.recursive_gaussian(image, &coefficients, &powers, boundary, o.fill_value, out);
                });
            });
            break;
        default:
            throw Error(ErrorCode::internal, std::string("variant ") + s.row->name() + " is not a correlate2d variant");
    }
}

namespace {

// Brings a call's image and output to where the plan runs, for the paths that wrap them in
// views of their own (batches, staging). CUDA: both in the device's memory (the image
// uploaded if it is not there or is host-dirty, the output allocated; the output is left
// device-dirty afterwards, as a 2D call leaves it), and Halide's copies, which run on the
// legacy default stream, finished. CPU: the image on the host, the output with host memory.
void bring_to(Device where, halide_buffer_t *image, halide_buffer_t *output) {
    if (where == Device::cuda) {
        const halide_device_interface_t *cuda = cuda_device_interface();
        if (image->device == 0 || image->host_dirty()) {
            if (image->device == 0) {
                image->set_host_dirty(true);
            }
            if (halide_copy_to_device(nullptr, image, cuda) != 0) {
                throw Error(ErrorCode::out_of_memory,
                            "could not copy the image to the device: " + internal::take_last_runtime_error());
            }
        }
        if (output->device == 0 && halide_device_malloc(nullptr, output, cuda) != 0) {
            throw Error(ErrorCode::out_of_memory,
                        "could not allocate the output on the device: " + internal::take_last_runtime_error());
        }
        internal::synchronize_stream(nullptr);
        return;
    }
    if (image->device_dirty() && halide_copy_to_host(nullptr, image) != 0) {
        throw Error(ErrorCode::device,
                    "could not copy the image back to the host: " + internal::take_last_runtime_error());
    }
    if (output->host == nullptr) {
        throw Error(ErrorCode::invalid_argument,
                    "output has no host memory for a CPU run; allocate host memory or use device cuda");
    }
}

}  // namespace

namespace {

// Part of a batch (x, y, n) in host or device memory, as `where` says: images first ..
// first + count - 1 as a batch of their own counted from 0 or, for count 0, image `first`
// as a 2D buffer.
struct BatchPart {
    halide_dimension_t dims[3];
    halide_buffer_t buffer{};
    BatchPart(const halide_buffer_t *batch, int first, int count, Device where) {
        dims[0] = batch->dim[0];
        dims[1] = batch->dim[1];
        dims[2] = {0, count, batch->dim[2].stride, 0};
        const int64_t offset = int64_t(first) * batch->dim[2].stride * batch->type.bytes();
        if (where == Device::cuda) {
            buffer.device = batch->device + uint64_t(offset);
            buffer.device_interface = batch->device_interface;
            buffer.set_device_dirty(true);
        } else {
            buffer.host = batch->host + offset;
        }
        buffer.type = batch->type;
        buffer.dimensions = count > 0 ? 3 : 2;
        buffer.dim = dims;
    }
};

// A CUDA batch through the row's batch form (cmake/halconv_registry.cmake, BATCH_FORM):
// one pipeline call, one launch of each stage, per group of images. False, with nothing
// run, where the row has none or its images would run in row bands one by one.
bool run_batch_form(const PlanState &s, halide_buffer_t *image, halide_buffer_t *output, size_t workspace_bytes,
                    Stream stream) {
    const Options &o = s.options;
    if (s.dispatch.device != Device::cuda || !s.batch_form_in_one_launch || s.scratch.width > 0) {
        return false;
    }
    const internal::PipelineFns &fn = s.row->fns(o.precision);
    const bool extended = s.row->signature == internal::Signature::kernel2d_extended;
    const bool valid = extended && o.mode == Mode::valid;
    BatchPart first_image(image, 0, 0, Device::cuda), first_output(output, 0, 0, Device::cuda);
    const bool too_large = internal::exceeds_one_shot(s.image, s.kernel, s.output);
    if (too_large ||
        internal::wants_bands(o, Device::cuda, &first_image.buffer, &first_output.buffer, workspace_bytes, false)) {
        return false;
    }
    // Images per call: CUDA's grid (65535 blocks along z), Halide's 2^31 - 1 elements a
    // buffer, the extended images' budget; then spread evenly over the calls.
    const int n = image->dim[2].extent;
    const int64_t extended_elements = extended && !valid ? int64_t(s.extended_pitch) * s.extended.height : 0;
    const int64_t extended_bytes = extended_elements * s.types.storage.bytes();
    const int64_t largest = std::max<int64_t>(
        {int64_t(image->dim[2].stride), int64_t(output->dim[2].stride), extended_elements, int64_t(1)});
    int64_t per_call = std::min<int64_t>({n, gpu_max_grid_y, std::max<int64_t>(1, INT32_MAX / largest)});
    if (extended_bytes > 0) {
        per_call = std::min(per_call, std::max<int64_t>(1, batch_extended_budget / extended_bytes));
    }
    const int64_t calls = (n + per_call - 1) / per_call;
    per_call = (n + calls - 1) / calls;

    std::shared_ptr<internal::WorkspacePool> extended_pool;
    if (extended_bytes > 0) {
        const size_t needed = size_t(per_call * extended_bytes);
        std::lock_guard<std::mutex> lock(s.batch_mutex);
        if (!s.batch_extended_pool || s.batch_extended_pool->bytes() < needed) {
            s.batch_extended_pool = internal::make_cuda_workspace_pool(needed);
        }
        extended_pool = s.batch_extended_pool;
    }
    internal::WorkspacePool::Lease lease = s.pool->acquire(stream);
    rk::WorkspaceScope scope({lease.data(), s.extern_bytes, s.fft.get(), s.fft_lines ? &*s.fft_lines : nullptr});
    std::optional<internal::WorkspacePool::Lease> extended_lease;
    if (extended_pool) {
        extended_lease.emplace(extended_pool->acquire(stream));
    }
    halide_buffer_t kernel2d = *s.kernel2d.raw_buffer();
    for (int first = 0; first < n; first += int(per_call)) {
        const int count = std::min(int(per_call), n - first);
        BatchPart in(image, first, count, Device::cuda), out(output, first, count, Device::cuda);
        if (extended) {
            run_extended_pipeline(s, fn.valid_batch, fn.kernel2d_extended_batch, &in.buffer, &kernel2d, &out.buffer,
                                  extended_lease ? extended_lease->data() : nullptr, count, stream);
            continue;
        }
        const int ox = offset_x(s) + output->dim[0].min - image->dim[0].min;
        const int oy = offset_y(s) + output->dim[1].min - image->dim[1].min;
        internal::run_pipeline(Device::cuda, {&in.buffer, &kernel2d}, &out.buffer, stream, "conv2d pipeline", [&] {
            return fn.kernel2d_batch(&in.buffer, &kernel2d, static_cast<int32_t>(o.boundary), o.fill_value, ox, oy,
                                     s.operation == Operation::convolve, &out.buffer);
        });
    }
    output->set_host_dirty(false);
    output->set_device_dirty(true);
    return true;
}

}  // namespace

void Plan::run_batch(halide_buffer_t *image, halide_buffer_t *output, Stream stream) const {
    const PlanState &s = *state_;
    const Options &o = s.options;
    internal::check_image_buffer(image, "image", s.types.storage, o.precision);
    internal::check_image_buffer(output, "output", s.types.output, o.precision);
    if (output->dimensions != 3 || output->dim[2].extent != image->dim[2].extent) {
        throw Error(ErrorCode::invalid_argument,
                    "the image is a batch of " + std::to_string(image->dim[2].extent) + " but the output " +
                        (output->dimensions == 3 ? "holds " + std::to_string(output->dim[2].extent) + " images"
                                                 : std::string("is one image")) +
                        "; a batch's output is a batch of as many (x, y, n)");
    }
    check_extent(image, s.image, "each image of the batch", "this plan was made for");
    check_extent(output, s.output, "each output of the batch", "this mode needs");
    internal::check_unit_stride(image, "image");
    internal::check_unit_stride(output, "output");
    internal::check_no_overlap(image, "image", output, "output");
    if (o.bands.banding == Banding::always) {
        throw Error(ErrorCode::unsupported,
                    "a batch does not run in row bands (Banding::always): filter its images "
                    "one call each, or use Banding::automatic");
    }
    const int n = image->dim[2].extent;
    bring_to(s.dispatch.device, image, output);
    if (s.dispatch.device == Device::cpu) {
        for (int i = 0; i < n; i++) {
            BatchPart in(image, i, 0, Device::cpu), out(output, i, 0, Device::cpu);
            run(&in.buffer, &out.buffer, stream);
        }
        if (output->device != 0) {
            output->set_device_dirty(false);
            output->set_host_dirty(true);
        }
        return;
    }
    // CUDA: the whole batch in the device's memory at once, then the row's batch form, or
    // every image's pipeline on the batch streams.
    if (run_batch_form(s, image, output, workspace_bytes(), stream)) {
        return;
    }
    internal::BatchStreams *streams = nullptr;
    {
        std::lock_guard<std::mutex> lock(s.batch_mutex);
        if (!s.batch_streams) {
            s.batch_streams = internal::make_batch_streams(batch_streams_per_plan);
        }
        streams = s.batch_streams.get();
    }
    output->set_host_dirty(false);
    streams->run(n, stream, [&](int i, Stream lane) {
        BatchPart in(image, i, 0, Device::cuda), out(output, i, 0, Device::cuda);
        run(&in.buffer, &out.buffer, lane);
    });
    output->set_device_dirty(true);
}

// Images or outputs of 8 or 16 bits, or batches of interleaved channels (halconv.h,
// "Staging"): converted into dense buffers of the precision's types on the plan's device,
// filtered as those, the result converted back (integers rounded and saturated).
void Plan::run_staged(halide_buffer_t *image, halide_buffer_t *output, Stream stream) const {
    const PlanState &s = *state_;
    const Options &o = s.options;
    internal::check_image_buffer(image, "image", internal::accepted_type(image, s.types.storage), o.precision);
    internal::check_image_buffer(output, "output", internal::accepted_type(output, s.types.output), o.precision);
    if (output->dimensions != image->dimensions ||
        (image->dimensions == 3 && output->dim[2].extent != image->dim[2].extent)) {
        throw Error(ErrorCode::invalid_argument,
                    "the output must be a batch of as many images as the image (x, y, n), or both 2D");
    }
    check_extent(image, s.image, image->dimensions == 3 ? "each image of the batch" : "image",
                 "this plan was made for");
    check_extent(output, s.output, output->dimensions == 3 ? "each output of the batch" : "output", "this mode needs");
    if (image->dimensions == 2) {
        internal::check_unit_stride(image, "image");
        internal::check_unit_stride(output, "output");
    }
    internal::check_no_overlap(image, "image", output, "output");
    if (image->type.bits == 16 && image->type.code == halide_type_uint && s.types.storage.bits == 16) {
        throw Error(ErrorCode::unsupported, std::string("a uint16 image in precision ") + to_string(o.precision) +
                                                ": float16 holds integers exactly only up to 2048 and overflows "
                                                "above 65504; use f32 or f64");
    }
    const Device where = s.dispatch.device;
    bring_to(where, image, output);
    // Views of the caller's buffers where they are read and written.
    halide_buffer_t in_view = *image, out_view = *output;
    if (where == Device::cuda) {
        in_view.host = out_view.host = nullptr;
    } else {
        in_view.device = out_view.device = 0;
        in_view.device_interface = out_view.device_interface = nullptr;
    }
    in_view.flags = out_view.flags = 0;
    std::unique_ptr<internal::StagingBuffer> in_stage, out_stage;
    halide_buffer_t *in = &in_view, *out = &out_view;
    if (internal::needs_staging(image)) {
        in_stage = std::make_unique<internal::StagingBuffer>(s.types.storage, image, where, stream);
        internal::stage_convert(&in_view, in_stage->raw(), where, stream);
        in = in_stage->raw();
    }
    if (internal::needs_staging(output)) {
        out_stage = std::make_unique<internal::StagingBuffer>(s.types.output, output, where, stream);
        out = out_stage->raw();
    }
    if (where == Device::cuda) {
        in->set_device_dirty(true);
    }
    run(in, out, stream);
    if (out_stage) {
        internal::stage_convert(out, &out_view, where, stream);
    }
    output->set_host_dirty(where == Device::cpu && output->device != 0);
    output->set_device_dirty(where == Device::cuda);
}

}  // namespace halconv
