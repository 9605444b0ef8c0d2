// SciPy itself as the oracle: tests/golden/scipy_signal_cases.txt holds
// scipy.signal.correlate2d / convolve2d results (scripts/make_scipy_golden.py). Both the
// float64 reference of the test suite and halconv's f64 pipelines must reproduce them,
// which pins down the placement of 'same' for even kernels and each boundary rule.
#include "test_support.h"

#include <fstream>
#include <sstream>

namespace halconv::test {
namespace {

struct GoldenCase {
    std::string fn, mode, boundary;
    double fill = 0.0;
    Image image, kernel, out;  // Image holds rows of width values
};

std::vector<double> read_values(const std::string &line, size_t skip = 0) {
    std::istringstream s(line);
    std::vector<double> v;
    double x = 0.0;
    for (size_t i = 0; i < skip; i++) {
        s >> x;
    }
    while (s >> x) {
        v.push_back(x);
    }
    return v;
}

std::vector<GoldenCase> load_cases() {
    std::ifstream in(repository_file("tests/golden/scipy_signal_cases.txt"));
    std::vector<GoldenCase> cases;
    std::string header, image, kernel, out;
    std::getline(in, header);  // comment line
    while (std::getline(in, header) && std::getline(in, image) && std::getline(in, kernel) && std::getline(in, out)) {
        GoldenCase c;
        int ih = 0, iw = 0, kh = 0, kw = 0, oh = 0, ow = 0;
        std::istringstream h(header);
        h >> c.fn >> c.mode >> c.boundary >> c.fill >> ih >> iw >> kh >> kw;
        std::istringstream o(out);
        o >> oh >> ow;
        c.image = Image{iw, ih, read_values(image)};
        c.kernel = Image{kw, kh, read_values(kernel)};
        c.out = Image{ow, oh, read_values(out, 2)};
        cases.push_back(c);
    }
    return cases;
}

Mode mode_of(const std::string &m) {
    return m == "valid" ? Mode::valid : (m == "same" ? Mode::same : Mode::full);
}

Boundary boundary_of(const std::string &b) {
    return b == "fill" ? Boundary::constant : (b == "wrap" ? Boundary::wrap : Boundary::reflect);
}

Halide::Runtime::Buffer<> to_buffer(const Image &img) {
    Halide::Runtime::Buffer<> b(halide_type_of<double>(), img.width, img.height);
    for (size_t i = 0; i < img.data.size(); i++) {
        store(b, i, img.data[i]);
    }
    return b;
}

TEST(ScipyGolden, ReferenceAndPipelinesReproduceScipy) {
    const std::vector<GoldenCase> cases = load_cases();
    ASSERT_GT(cases.size(), 50u) << "golden file missing or truncated";
    for (const GoldenCase &c : cases) {
        SCOPED_TRACE(c.fn + " " + c.mode + " " + c.boundary + " image " + std::to_string(c.image.width) + "x" +
                     std::to_string(c.image.height) + " kernel " + std::to_string(c.kernel.width) + "x" +
                     std::to_string(c.kernel.height));
        const bool flip = c.fn == "convolve2d";
        const Reference ref =
            correlate_reference(c.image, c.kernel, mode_of(c.mode), boundary_of(c.boundary), c.fill, flip);
        ASSERT_EQ(ref.value.width, c.out.width);
        ASSERT_EQ(ref.value.height, c.out.height);
        for (size_t i = 0; i < c.out.data.size(); i++) {
            ASSERT_NEAR(ref.value.data[i], c.out.data[i], 1e-13) << "reference differs from SciPy at " << i;
        }
        for (Algorithm a : {Algorithm::naive, Algorithm::shared_tiled, Algorithm::autoscheduled}) {
            Halide::Runtime::Buffer<> image = to_buffer(c.image), kernel = to_buffer(c.kernel);
            Options o;
            o.algorithm = a;
            o.precision = Precision::f64;
            o.mode = mode_of(c.mode);
            o.boundary = boundary_of(c.boundary);
            o.fill_value = c.fill;
            o.device = Device::cpu;
            Halide::Runtime::Buffer<> out = flip ? convolve2d(image, kernel, o) : correlate2d(image, kernel, o);
            for (size_t i = 0; i < c.out.data.size(); i++) {
                ASSERT_NEAR(load(out, i), c.out.data[i], 1e-13) << to_string(a) << " differs from SciPy at " << i;
            }
        }
    }
}

}  // namespace
}  // namespace halconv::test
