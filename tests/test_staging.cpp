// Staging (halconv.h, "Staging"): 8- and 16-bit unsigned images and outputs, and batches of
// interleaved channels, give what the float call on the same values gives (integer outputs
// rounded to nearest, ties to even, and saturated); on the CPU here, on CUDA where a device is.
#include <gmock/gmock.h>

#include <cmath>
#include <cstring>

#include "test_support.h"

namespace halconv::test {
namespace {

using ::testing::HasSubstr;

// w x h (x c interleaved when c > 0) of `type` with values uniform in [0, top].
template <typename T>
Halide::Runtime::Buffer<T> random_integers(int w, int h, int c, int top) {
    Halide::Runtime::Buffer<T> b =
        c > 0 ? Halide::Runtime::Buffer<T>::make_interleaved(w, h, c) : Halide::Runtime::Buffer<T>(w, h);
    std::uniform_int_distribution<int> dist(0, top);
    b.for_each_value([&](T &v) { v = static_cast<T>(dist(rng())); });
    return b;
}

// The float32 copy of an integer buffer (same layout).
template <typename T>
Halide::Runtime::Buffer<float> as_float(const Halide::Runtime::Buffer<T> &b) {
    Halide::Runtime::Buffer<float> f =
        b.dimensions() == 3 ? Halide::Runtime::Buffer<float>::make_interleaved(b.width(), b.height(), b.channels())
                            : Halide::Runtime::Buffer<float>(b.width(), b.height());
    f.for_each_element([&](const int *pos) { f(pos) = float(b(pos)); });
    return f;
}

std::vector<Device> devices() {
    std::vector<Device> d{Device::cpu};
    if (cuda_available()) {
        d.push_back(Device::cuda);
    }
    return d;
}

TEST(Staging, EightBitImagesGiveTheFloatResultOrItsRoundedSaturatedBytes) {
    for (Device device : devices()) {
        for (Mode mode : {Mode::same, Mode::valid, Mode::full}) {
            SCOPED_TRACE(std::string(to_string(device)) + " " + to_string(mode));
            Halide::Runtime::Buffer<uint8_t> image = random_integers<uint8_t>(67, 41, 0, 255);
            Halide::Runtime::Buffer<float> kernel(5, 3);
            kernel.for_each_value([](float &v) { v = std::uniform_real_distribution<float>(-0.3f, 0.6f)(rng()); });
            Options o;
            o.device = device;
            o.mode = mode;
            o.boundary = Boundary::reflect;
            Halide::Runtime::Buffer<float> reference = as_float(image);
            Halide::Runtime::Buffer<> expected = correlate2d(reference, kernel, o);
            expected.copy_to_host();
            Halide::Runtime::Buffer<> as_floats = correlate2d(image, kernel, o);
            as_floats.copy_to_host();
            EXPECT_TRUE(same_bits(as_floats, expected)) << "uint8 in, float32 out";
            const Extent2d e = output_extent({67, 41}, {5, 3}, mode);
            Halide::Runtime::Buffer<uint8_t> bytes(e.width, e.height);
            bytes.fill(77);
            correlate2d(image, kernel, bytes, o);
            bytes.copy_to_host();
            const Halide::Runtime::Buffer<float> f(expected);
            int wrong = 0;
            bytes.for_each_element([&](int x, int y) {
                const double r = std::nearbyint(double(f(x, y)));
                wrong += bytes(x, y) != uint8_t(r < 0 ? 0 : r > 255 ? 255 : r);
            });
            EXPECT_EQ(wrong, 0) << "uint8 out: rounded to nearest even and saturated";
        }
    }
}

TEST(Staging, SixteenBitImagesAndTheirPrecisions) {
    for (Device device : devices()) {
        SCOPED_TRACE(to_string(device));
        Halide::Runtime::Buffer<uint16_t> image = random_integers<uint16_t>(40, 33, 0, 65535);
        Halide::Runtime::Buffer<double> kernel(3, 3);
        kernel.fill(1.0 / 9.0);
        Options o;
        o.device = device;
        o.precision = Precision::f64;
        Halide::Runtime::Buffer<uint16_t> out(40, 33);
        correlate2d(image, kernel, out, o);
        out.copy_to_host();
        Halide::Runtime::Buffer<double> reference(40, 33);
        reference.for_each_element([&](int x, int y) { reference(x, y) = image(x, y); });
        Halide::Runtime::Buffer<> expected = correlate2d(reference, kernel, o);
        expected.copy_to_host();
        const Halide::Runtime::Buffer<double> f(expected);
        int wrong = 0;
        out.for_each_element([&](int x, int y) { wrong += out(x, y) != uint16_t(std::nearbyint(f(x, y))); });
        EXPECT_EQ(wrong, 0);
        Options half = o;
        half.precision = Precision::f16f32;
        Halide::Runtime::Buffer<> k16(halide_type_t(halide_type_float, 16), 3, 3);
        std::memset(k16.data(), 0, k16.size_in_bytes());
        try {
            Halide::Runtime::Buffer<float> f32(40, 33);
            correlate2d(image, k16, f32, half);
            ADD_FAILURE() << "a uint16 image in f16f32 must be refused";
        } catch (const Error &e) {
            EXPECT_EQ(e.code(), ErrorCode::unsupported);
            EXPECT_THAT(e.what(), HasSubstr("float16 holds integers exactly only up to 2048"));
        }
    }
}

// An interleaved colour image (x, y, c with x stride c) is a batch of its channels.
TEST(Staging, InterleavedChannelsAreFilteredEachAsItsOwnImage) {
    for (Device device : devices()) {
        SCOPED_TRACE(to_string(device));
        Halide::Runtime::Buffer<uint8_t> rgb = random_integers<uint8_t>(53, 37, 3, 255);
        Halide::Runtime::Buffer<float> kernel(7, 7);
        kernel.fill(1.0f / 49.0f);
        kernel(3, 3) += 0.25f;  // not separable
        Options o;
        o.device = device;
        o.boundary = Boundary::wrap;
        Halide::Runtime::Buffer<uint8_t> out = Halide::Runtime::Buffer<uint8_t>::make_interleaved(53, 37, 3);
        correlate2d(rgb, kernel, out, o);
        out.copy_to_host();
        Halide::Runtime::Buffer<float> planes = as_float(rgb);
        Halide::Runtime::Buffer<float> float_out = Halide::Runtime::Buffer<float>::make_interleaved(53, 37, 3);
        const Plan plan({53, 37}, kernel, o);
        plan.apply(planes, float_out);
        float_out.copy_to_host();
        for (int c = 0; c < 3; c++) {
            Halide::Runtime::Buffer<float> channel(53, 37);
            channel.for_each_element([&](int x, int y) { channel(x, y) = float(rgb(x, y, c)); });
            Halide::Runtime::Buffer<> alone = correlate2d(channel, kernel, o);
            alone.copy_to_host();
            const Halide::Runtime::Buffer<float> a(alone);
            int wrong = 0;
            a.for_each_element([&](int x, int y) {
                wrong += out(x, y, c) != uint8_t(std::clamp(std::nearbyint(double(a(x, y))), 0.0, 255.0));
                wrong += float_out(x, y, c) != a(x, y);
            });
            EXPECT_EQ(wrong, 0) << "channel " << c;
        }
    }
}

TEST(Staging, OtherTypesAndMismatchesAreRefused) {
    Halide::Runtime::Buffer<int16_t> signed_image(16, 16);
    signed_image.fill(0);
    Halide::Runtime::Buffer<float> kernel(3, 3), out(16, 16);
    kernel.fill(1.0f);
    Options o;
    o.device = Device::cpu;
    try {
        correlate2d(signed_image, kernel, out, o);
        ADD_FAILURE() << "int16 must be refused";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
        EXPECT_THAT(e.what(), HasSubstr("image holds int16"));
    }
    Halide::Runtime::Buffer<uint8_t> rgb = random_integers<uint8_t>(16, 16, 3, 255);
    Halide::Runtime::Buffer<uint8_t> two = Halide::Runtime::Buffer<uint8_t>::make_interleaved(16, 16, 2);
    try {
        correlate2d(rgb, kernel, two, o);
        ADD_FAILURE() << "a batch of 2 for 3 must be refused";
    } catch (const Error &e) {
        EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    }
}

}  // namespace
}  // namespace halconv::test
