// --kernel SPEC parsing (src/io/kernel_spec.h): every named kernel's taps, text and FITS
// kernel files, and the errors for malformed specs and files.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>

#include "halconv/error.h"
#include "image_io.h"
#include "kernel_spec.h"
#include "test_support.h"

namespace fs = std::filesystem;
using halconv::io::KernelTaps;
using halconv::io::parse_kernel_spec;
using ::testing::HasSubstr;

namespace {

double sum(const KernelTaps &k) {
    return std::accumulate(k.taps.begin(), k.taps.end(), 0.0);
}

double at(const KernelTaps &k, int x, int y) {
    return k.taps[size_t(y) * k.width + x];
}

std::string error_of(const std::string &spec) {
    try {
        parse_kernel_spec(spec);
    } catch (const halconv::Error &e) {
        return e.what();
    }
    ADD_FAILURE() << "no halconv::Error for '" << spec << "'";
    return {};
}

TEST(KernelSpec, Gaussian) {
    const KernelTaps g = parse_kernel_spec("gaussian:sigma=1.4");
    EXPECT_EQ(g.width, 11);  // 2 ceil(4.2) + 1
    EXPECT_EQ(g.height, 11);
    EXPECT_NEAR(sum(g), 1.0, 1e-15);
    EXPECT_NEAR(at(g, 5, 5) / at(g, 6, 5), std::exp(1 / (2 * 1.4 * 1.4)), 1e-12);
    EXPECT_DOUBLE_EQ(at(g, 2, 7), at(g, 7, 2));  // symmetric
    const KernelTaps even = parse_kernel_spec("gaussian:size=4,sigma=2");
    EXPECT_EQ(even.width, 4);
    EXPECT_DOUBLE_EQ(at(even, 1, 1), at(even, 2, 2));  // centred between the middle taps
}

// A sigma far below a tap's spacing is the limit of the Gaussian, a unit impulse (the
// squares of the offsets and of sigma underflow; the taps must not become 0 / 0).
TEST(KernelSpec, TinySigmaIsTheUnitImpulse) {
    for (const char *spec : {"gaussian:sigma=1e-300", "gaussian:sigma=4.9e-324", "gaussian:sigma=1e-300,size=5"}) {
        const KernelTaps g = parse_kernel_spec(spec);
        const int c = g.width / 2;
        for (int y = 0; y < g.height; y++) {
            for (int x = 0; x < g.width; x++) {
                EXPECT_EQ(at(g, x, y), x == c && y == c ? 1.0 : 0.0) << spec << " at " << x << ", " << y;
            }
        }
    }
    const KernelTaps l = parse_kernel_spec("log:sigma=1e-75");
    for (double v : l.taps) {
        EXPECT_TRUE(std::isfinite(v));
    }
    EXPECT_NEAR(sum(l) / std::abs(at(l, 1, 1)), 0.0, 1e-15);
    EXPECT_THAT(error_of("log:sigma=1e-76"), HasSubstr("allowed a number in [1e-75, 100]"));
}

TEST(KernelSpec, LaplacianOfGaussianIsZeroSum) {
    const KernelTaps l = parse_kernel_spec("log:sigma=2");
    EXPECT_EQ(l.width, 17);
    EXPECT_NEAR(sum(l), 0.0, 1e-15);
    EXPECT_LT(at(l, 8, 8), 0.0);  // negative centre, positive ring
    EXPECT_GT(at(l, 8, 8 + 4), 0.0);
}

TEST(KernelSpec, FixedKernels) {
    EXPECT_EQ(parse_kernel_spec("laplacian").taps, (std::vector<double>{0, 1, 0, 1, -4, 1, 0, 1, 0}));
    EXPECT_EQ(parse_kernel_spec("sobel-x").taps, (std::vector<double>{-1, 0, 1, -2, 0, 2, -1, 0, 1}));
    EXPECT_EQ(parse_kernel_spec("sobel-y").taps, (std::vector<double>{-1, -2, -1, 0, 0, 0, 1, 2, 1}));
    const KernelTaps b = parse_kernel_spec("box:5");
    EXPECT_EQ(b.width, 5);
    EXPECT_EQ(b.taps, std::vector<double>(25, 1.0 / 25));
}

TEST(KernelSpec, RandomIsUniformAndReproducible) {
    const KernelTaps a = parse_kernel_spec("random:15");
    EXPECT_EQ(a.width, 15);
    for (double v : a.taps) {
        EXPECT_GE(v, 0.0);
        EXPECT_LT(v, 1.0);
    }
    EXPECT_EQ(parse_kernel_spec("random:15,seed=1").taps, a.taps);  // default seed 1
    EXPECT_NE(parse_kernel_spec("random:15,seed=2").taps, a.taps);
    EXPECT_NEAR(sum(parse_kernel_spec("random:127,seed=9")) / (127.0 * 127), 0.5, 0.01);
}

TEST(KernelSpec, TextFiles) {
    const KernelTaps k = halconv::io::parse_kernel_text("k.txt", "1, 2,3\r\n\n4\t5 6\n-7e-1 8 9.5\n");
    EXPECT_EQ(k.width, 3);
    EXPECT_EQ(k.height, 3);
    EXPECT_EQ(k.taps, (std::vector<double>{1, 2, 3, 4, 5, 6, -0.7, 8, 9.5}));
    EXPECT_EQ(halconv::io::parse_kernel_text("row.txt", "1 2 3 4").height, 1);

    auto text_error = [](const std::string &text) {
        try {
            halconv::io::parse_kernel_text("bad.txt", text);
        } catch (const halconv::Error &e) {
            return std::string(e.what());
        }
        ADD_FAILURE() << "no halconv::Error for " << text;
        return std::string();
    };
    EXPECT_THAT(text_error("1 2\n3\n"), HasSubstr("bad.txt, line 2: 1 numbers, the rows above have 2"));
    EXPECT_THAT(text_error("1 x\n"), HasSubstr("line 1: 'x' is not a finite number"));
    EXPECT_THAT(text_error("1 nan\n"), HasSubstr("'nan' is not a finite number"));
    EXPECT_THAT(text_error("1 1e999\n"), HasSubstr("'1e999' is not a finite number"));
    EXPECT_THAT(text_error("\n \n"), HasSubstr("bad.txt: no numbers"));
    EXPECT_THAT(text_error(""), HasSubstr("no numbers"));
}

TEST(KernelSpec, KernelFilesByPath) {
    const fs::path dir = fs::temp_directory_path() / ("halconv-spec-" + std::to_string(halconv::test::rng()()));
    fs::create_directories(dir);
    const std::string txt = (dir / "k.txt").string();
    std::ofstream(txt) << "0.25 0.5\n0.125 0.125\n";
    const KernelTaps t = parse_kernel_spec(txt);
    EXPECT_EQ(t.width, 2);
    EXPECT_EQ(t.taps, (std::vector<double>{0.25, 0.5, 0.125, 0.125}));

    halconv::io::FitsImage f;
    f.width = 3;
    f.height = 2;
    f.bitpix = -64;
    f.data = {1, 2, 3, 4, 5, 6};
    const std::string fits = (dir / "k.fits").string();
    halconv::io::write_fits(fits, f);
    const KernelTaps k = parse_kernel_spec(fits);
    EXPECT_EQ(k.width, 3);
    EXPECT_EQ(k.height, 2);
    EXPECT_EQ(k.taps, f.data);

    f.data[4] = std::nan("");
    halconv::io::write_fits(fits, f);
    EXPECT_THAT(error_of(fits), HasSubstr("NaN or infinite tap"));
    EXPECT_THAT(error_of((dir / "missing.txt").string()), HasSubstr("missing.txt: no such file"));
    fs::remove_all(dir);
}

// Kernel files are held to the kernel caps before they are read: a text file longer
// than the largest kernel needs, a FITS kernel wider than 1024.
TEST(KernelSpec, KernelFilesBeyondTheCapsAreRefusedBeforeReading) {
    const fs::path dir = fs::temp_directory_path() / ("halconv-kcap-" + std::to_string(halconv::test::rng()()));
    fs::create_directories(dir);
    const std::string text = (dir / "huge.txt").string();
    std::ofstream(text) << "1 2 3\n";
    fs::resize_file(text, halconv::io::max_kernel_text_bytes + 1);  // sparse: nothing to read
    EXPECT_THAT(error_of(text), HasSubstr("more than the 33554432 allowed here"));

    halconv::io::FitsImage wide;
    wide.width = halconv::io::max_spec_kernel_edge + 1;
    wide.height = 1;
    wide.data.assign(size_t(wide.width), 0.5);
    const std::string fits = (dir / "wide.fits").string();
    halconv::io::write_fits(fits, wide);
    EXPECT_THAT(error_of(fits), HasSubstr("1025 x 1 is larger than allowed here (1024 per axis)"));
    fs::remove_all(dir);
}

TEST(KernelSpec, MalformedSpecsSayWhatIsAllowed) {
    EXPECT_THAT(error_of("gauss:sigma=1"), HasSubstr("unknown kernel 'gauss:sigma=1'; allowed: gaussian:sigma=S"));
    EXPECT_THAT(error_of("gaussian"), HasSubstr("sigma is required"));
    EXPECT_THAT(error_of("gaussian:sigma=0"), HasSubstr("allowed a number in (0, 100]"));
    EXPECT_THAT(error_of("gaussian:sigma=abc"), HasSubstr("sigma 'abc'"));
    EXPECT_THAT(error_of("gaussian:sigma=1,width=3"), HasSubstr("unknown parameter 'width'; allowed sigma, size"));
    EXPECT_THAT(error_of("gaussian:sigma=1,sigma=2"), HasSubstr("sigma given twice"));
    EXPECT_THAT(error_of("gaussian:sigma=1,size=0"), HasSubstr("allowed an integer 1 .. 1024"));
    EXPECT_THAT(error_of("box"), HasSubstr("size ''"));
    EXPECT_THAT(error_of("box:2000"), HasSubstr("size '2000'; allowed an integer 1 .. 1024"));
    EXPECT_THAT(error_of("box:3.5"), HasSubstr("size '3.5'"));
    EXPECT_THAT(error_of("random:5,seed=-1"), HasSubstr("allowed a non-negative integer"));
    EXPECT_THAT(error_of("random:5,7"), HasSubstr("'7' is not key=value"));
    EXPECT_THAT(error_of("laplacian:3"), HasSubstr("unexpected '3'"));
    EXPECT_THAT(error_of("sobel-x:size=5"), HasSubstr("unknown parameter 'size'; it takes none"));
}

}  // namespace
