// Auto's cost model: a time for each candidate algorithm, interpolated from the device's
// measurements (halconv/tuning.h), and the choice of the fastest.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "halconv/tuning.h"
#include "registry.h"

namespace halconv::internal {

struct AutoRequest {
    Precision precision = Precision::f32;
    Mode mode = Mode::same;
    Extent2d image, kernel;
    int kernel_rank = 1;  // the kernel's numerical rank (low_rank's time grows with it)
    int images = 1;       // images per call (a batch): see choose_fastest
};

// Predicted median ms of `algorithm` for the request from `measurements`, or nullopt
// when none is of that algorithm and precision. Measured points are interpolated
// linearly in log(time) over log(K) (K the kernel's geometric mean edge) per image size,
// then over log(pixels) across sizes; beyond the measured range the nearest slope
// continues (clamped: a time never falls as K or the image grows). Measurements of
// another mode count with their time scaled by the output pixels of the two modes, and
// low_rank's with theirs scaled by the ratio of the request's rank to the measured one
// (r separable passes: its work is r (kw + kh) per output). A request of n images is
// predicted as one image of n times the pixels.
std::optional<double> predict_ms(const std::vector<Measurement> &measurements, Algorithm algorithm,
                                 const AutoRequest &request);

struct AutoCandidate {
    Algorithm algorithm;
    const VariantRow *row;
    // Whether a batch runs in one launch per group of images (src/plan.cpp): such a batch
    // of n costs about what one image of n times the pixels does; another's images run one
    // by one (on several streams), predicted at n times one image's time.
    bool batch_in_one_launch = false;
};

struct AutoChoice {
    size_t index = 0;  // into the candidates
    std::string reason;
};

// The candidate with the smallest predicted time under `table`. Candidates without a
// prediction lose to any with one; when none has one, the static order of the first
// releases decides: separable (a rank-1 kernel), then shared_tiled, then naive.
AutoChoice choose_fastest(const std::vector<AutoCandidate> &candidates, const AutoRequest &request,
                          const CostTable &table);

// The cost table for a device, cached per device and wisdom (wisdom.cpp).
std::shared_ptr<const CostTable> cached_cost_table(const DeviceIdentity &device);

}  // namespace halconv::internal
