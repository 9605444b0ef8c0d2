// The halconv tool end to end, as a user runs it: `filter` on FITS files against the
// float64 reference for every mode, boundary and kernel spec; PNG colour + alpha; batch
// mode; `edges` and `unsharp` against their float64 definitions; `info`, `bench-quick`
// and the README's demo; every error path with its exit status, message and no output.
// The tool is found through $HALCONV_CLI (scripts/gpu-check sets it) or the build tree.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "image_io.h"
#include "kernel_spec.h"
#include "reference.h"
#include "test_support.h"

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

namespace {

struct CliRun {
    int status = -1;
    std::string output;  // stdout and stderr
};

std::string cli_path() {
    const char *env = std::getenv("HALCONV_CLI");
    return env != nullptr ? env : HALCONV_CLI_PATH;
}

// Runs the tool with `args` (and `environment`, a prefix of NAME=value words).
CliRun run_cli(const std::string &args, const std::string &environment = "") {
    CliRun r;
    const std::string command = environment + "'" + cli_path() + "' " + args + " 2>&1";
    std::FILE *pipe = popen(command.c_str(), "r");
    if (pipe == nullptr) {
        ADD_FAILURE() << "cannot run " << command;
        return r;
    }
    std::array<char, 4096> chunk{};
    size_t got = 0;
    while ((got = std::fread(chunk.data(), 1, chunk.size(), pipe)) > 0) {
        r.output.append(chunk.data(), got);
    }
    const int status = pclose(pipe);
    r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return r;
}

class Cli : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(fs::exists(cli_path())) << "the halconv tool is not at " << cli_path() << " (set HALCONV_CLI)";
        dir_ = fs::temp_directory_path() / ("halconv-cli-" + std::to_string(halconv::test::rng()()));
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string &name) const { return (dir_ / name).string(); }
    fs::path dir_;
};

std::string read_text(const std::string &p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

halconv::io::FitsImage random_fits(int width, int height) {
    halconv::io::FitsImage f;
    f.width = width;
    f.height = height;
    f.bitpix = -64;
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    f.data.resize(size_t(width) * height);
    for (double &v : f.data) {
        v = u(halconv::test::rng());
    }
    return f;
}

halconv::test::Reference reference_for(const halconv::io::FitsImage &in, const halconv::io::KernelTaps &k,
                                       halconv::Mode mode, halconv::Boundary b, double fill, bool flip) {
    return halconv::test::correlate_reference({in.width, in.height, in.data}, {k.width, k.height, k.taps}, mode, b,
                                              fill, flip);
}

// Float64 end to end: the only differences from the reference are rounding in a
// different summation order, bounded by taps * 2^-52 * sum |k||x|.
void expect_matches(const halconv::io::FitsImage &out, const halconv::test::Reference &ref, int taps,
                    const std::string &what) {
    ASSERT_EQ(out.width, ref.value.width) << what;
    ASSERT_EQ(out.height, ref.value.height) << what;
    EXPECT_EQ(out.bitpix, -64) << what;
    for (size_t i = 0; i < out.data.size(); i++) {
        const double tol = (taps + 4) * std::ldexp(ref.magnitude.data[i], -52) + 1e-300;
        ASSERT_NEAR(out.data[i], ref.value.data[i], tol) << what << ", sample " << i;
    }
}

TEST_F(Cli, EveryModeAndBoundaryMatchesFloat64Reference) {
    const halconv::io::FitsImage in = random_fits(23, 17);
    const std::string input = path("in.fits"), output = path("out.fits");
    halconv::io::write_fits(input, in);
    const halconv::io::KernelTaps k = halconv::io::parse_kernel_spec("random:4,seed=5");  // even: centring matters
    for (halconv::Mode mode : {halconv::Mode::valid, halconv::Mode::same, halconv::Mode::full}) {
        for (halconv::Boundary b : {halconv::Boundary::constant, halconv::Boundary::nearest, halconv::Boundary::reflect,
                                    halconv::Boundary::mirror, halconv::Boundary::wrap}) {
            for (bool flip : {false, true}) {
                const std::string args = "filter '" + input + "' '" + output +
                                         "' --kernel random:4,seed=5 --precision f64 --device cpu --fill 0.25 --mode " +
                                         halconv::to_string(mode) + " --boundary " + halconv::to_string(b) +
                                         (flip ? " --convolve" : "");
                const CliRun r = run_cli(args);
                ASSERT_EQ(r.status, 0) << args << "\n" << r.output;
                expect_matches(halconv::io::read_fits(output), reference_for(in, k, mode, b, 0.25, flip), 16, args);
            }
        }
    }
}

TEST_F(Cli, BandsGiveTheSameFileAndBadBandOptionsAreRefused) {
    const halconv::io::FitsImage in = random_fits(31, 26);
    const std::string input = path("in.fits"), whole = path("whole.fits"), banded = path("banded.fits");
    halconv::io::write_fits(input, in);
    const std::string common = " --kernel random:5,seed=3 --precision f64 --device cpu --boundary wrap";
    ASSERT_EQ(run_cli("filter '" + input + "' '" + whole + "'" + common + " --bands never").status, 0);
    const CliRun r = run_cli("filter '" + input + "' '" + banded + "'" + common + " --bands always --band-rows 4");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_EQ(read_text(banded), read_text(whole));
    for (const std::string bad : {"--bands sometimes", "--band-rows 0", "--band-rows 2.5", "--gpus 0,x", "--gpus -1"}) {
        const CliRun e = run_cli("filter '" + input + "' '" + path("bad.fits") + "'" + common + " " + bad);
        EXPECT_EQ(e.status, 2) << bad << "\n" << e.output;
        EXPECT_THAT(e.output, HasSubstr(bad.substr(0, bad.find(' ')))) << bad;
        EXPECT_FALSE(fs::exists(path("bad.fits"))) << bad;
    }
}

TEST_F(Cli, EveryKernelSpecMatchesFloat64Reference) {
    const halconv::io::FitsImage in = random_fits(31, 20);
    const std::string input = path("in.fits"), output = path("out.fits");
    halconv::io::write_fits(input, in);
    const std::string txt = path("k.txt");
    std::ofstream(txt) << "1 2 3\n-4, 5, 6\n";
    halconv::io::FitsImage kf = random_fits(5, 2);
    const std::string kfits = path("k.fits");
    halconv::io::write_fits(kfits, kf);
    for (const std::string &spec :
         std::vector<std::string>{"gaussian:sigma=1.4", "gaussian:sigma=2,size=4", "box:3", "laplacian", "sobel-x",
                                  "sobel-y", "log:sigma=1", "random:7,seed=3", txt, kfits}) {
        const std::string args = "filter '" + input + "' '" + output + "' --kernel '" + spec +
                                 "' --precision f64 --device cpu --boundary reflect";
        const CliRun r = run_cli(args);
        ASSERT_EQ(r.status, 0) << args << "\n" << r.output;
        const halconv::io::KernelTaps k = halconv::io::parse_kernel_spec(spec);
        expect_matches(halconv::io::read_fits(output),
                       reference_for(in, k, halconv::Mode::same, halconv::Boundary::reflect, 0.0, false),
                       k.width * k.height, spec);
    }
}

TEST_F(Cli, PngColourIsFilteredPerChannelAndAlphaPassesThrough) {
    halconv::io::Image in;
    in.width = 19;
    in.height = 12;
    std::uniform_int_distribution<int> code(0, 255);
    in.channels.assign(3, std::vector<double>(size_t(in.width) * in.height));
    in.alpha.resize(size_t(in.width) * in.height);
    for (auto *plane : {&in.channels[0], &in.channels[1], &in.channels[2], &in.alpha}) {
        for (double &v : *plane) {
            v = code(halconv::test::rng()) / 255.0;
        }
    }
    const std::string input = path("in.png"), output = path("out.png");
    halconv::io::write_png(input, in);
    const CliRun r =
        run_cli("filter '" + input + "' '" + output + "' --kernel sobel-x --device cpu --boundary nearest");
    ASSERT_EQ(r.status, 0) << r.output;
    const halconv::io::Image out = halconv::io::read_png(output);
    ASSERT_EQ(out.channels.size(), 3u);
    EXPECT_EQ(out.alpha, in.alpha);
    EXPECT_EQ(out.bit_depth, 8);
    const halconv::io::KernelTaps k = halconv::io::parse_kernel_spec("sobel-x");
    for (int c = 0; c < 3; c++) {
        const auto ref =
            halconv::test::correlate_reference({in.width, in.height, in.channels[c]}, {k.width, k.height, k.taps},
                                               halconv::Mode::same, halconv::Boundary::nearest, 0.0, false);
        for (size_t i = 0; i < out.channels[c].size(); i++) {
            // float32 arithmetic, then clamped to [0, 1] and rounded to 8 bits: within one code.
            const double expected = std::round(std::clamp(ref.value.data[i], 0.0, 1.0) * 255) / 255;
            ASSERT_NEAR(out.channels[c][i], expected, 1.0 / 255 + 1e-12) << "channel " << c << ", pixel " << i;
        }
    }
}

TEST_F(Cli, BatchModeWritesEachInputAndReportsFailures) {
    const std::string in_dir = path("in"), out_dir = path("out");
    fs::create_directories(in_dir);
    halconv::io::write_fits(in_dir + "/a.fits", random_fits(9, 8));
    halconv::io::Image png;
    png.width = 6;
    png.height = 5;
    png.channels.assign(1, std::vector<double>(30, 0.5));
    halconv::io::write_png(in_dir + "/b.png", png);
    std::ofstream(in_dir + "/notes.txt") << "not an image, skipped";
    CliRun r = run_cli("filter '" + in_dir + "' '" + out_dir + "' --kernel box:3 --device cpu");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("[2/2]"));
    EXPECT_TRUE(fs::exists(out_dir + "/a.fits"));
    EXPECT_TRUE(fs::exists(out_dir + "/b.png"));
    EXPECT_FALSE(fs::exists(out_dir + "/notes.txt"));

    std::ofstream(in_dir + "/c.png") << "broken";
    r = run_cli("filter '" + in_dir + "/a.fits' '" + in_dir + "/c.png' '" + path("out2") +
                "' --kernel box:3 --device cpu");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("c.png: not a PNG file"));
    EXPECT_THAT(r.output, HasSubstr("1 written, 1 failed"));
    EXPECT_TRUE(fs::exists(path("out2/a.fits")));
    EXPECT_FALSE(fs::exists(path("out2/c.png")));
}

// Batch runs that would lose data are refused before anything is written: two inputs
// of one file name, an output directory that is the input directory, an output that is
// the input; a stray option is not taken as a path; errors carry one prefix.
TEST_F(Cli, BatchModeNeverOverwritesInputsOrItsOwnOutputs) {
    const std::string a = path("a"), b = path("b"), out = path("out");
    fs::create_directories(a);
    fs::create_directories(b);
    halconv::io::write_fits(a + "/same.fits", random_fits(9, 8));
    halconv::io::write_fits(b + "/same.fits", random_fits(7, 6));
    const std::string a_bytes = read_text(a + "/same.fits");

    CliRun r = run_cli("filter '" + a + "/same.fits' '" + b + "/same.fits' '" + out + "' --kernel box:3 --device cpu");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("would both write " + out + "/same.fits"));
    EXPECT_FALSE(fs::exists(out)) << "nothing is written, not even the directory";

    r = run_cli("filter '" + a + "' '" + b + "' '" + out + "' --kernel box:3 --device cpu");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("would both write"));
    EXPECT_FALSE(fs::exists(out));

    for (const std::string &target : {a, a + "/.", a + "/../a"}) {
        r = run_cli("filter '" + a + "' '" + target + "' --kernel box:3 --device cpu");
        EXPECT_EQ(r.status, 1) << target << "\n" << r.output;
        EXPECT_THAT(r.output, HasSubstr("would replace the original")) << target;
    }
    r = run_cli("filter '" + a + "/same.fits' '" + a + "/same.fits' --kernel box:3 --device cpu");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("would replace the original"));
    fs::create_symlink(a + "/same.fits", path("alias.fits"));
    r = run_cli("filter '" + a + "/same.fits' '" + path("alias.fits") + "' --kernel box:3 --device cpu");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("would replace the original"));
    EXPECT_EQ(read_text(a + "/same.fits"), a_bytes);

    // A stray short option is an error, not a path (nor a switch into batch mode).
    const std::string cwd = fs::current_path().string();
    fs::current_path(dir_);
    r = run_cli("filter '" + a + "/same.fits' -x '" + out + ".fits' --kernel box:3 --device cpu");
    fs::current_path(cwd);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_THAT(r.output, HasSubstr("unknown option -x (a file whose name starts with '-': write ./-x)"));
    EXPECT_FALSE(fs::exists(path("-x")));
    EXPECT_FALSE(fs::exists(out + ".fits"));
    // After "--" every word is a path.
    halconv::io::write_fits(path("-dash.fits"), random_fits(5, 5));
    fs::current_path(dir_);
    r = run_cli("filter --kernel box:3 --device cpu -- -dash.fits dashed.fits");
    fs::current_path(cwd);
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_TRUE(fs::exists(path("dashed.fits")));

    // One prefix per error line, in batch mode too.
    std::ofstream(b + "/broken.png") << "broken";
    r = run_cli("filter '" + b + "/broken.png' '" + a + "/same.fits' '" + path("out2") + "' --kernel box:3");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("halconv: error: cannot read"));
    EXPECT_THAT(r.output, Not(HasSubstr("halconv: error: halconv:")));
    r = run_cli("filter '" + path("missing.fits") + "' '" + path("x.fits") + "' --kernel box:3");
    EXPECT_THAT(r.output, Not(HasSubstr("halconv: error: halconv:")));
}

// Option syntax (CLI11's): "--flag=value" is "--flag value", a repeated option keeps
// its last value, and words a command does not take are refused, not ignored.
TEST_F(Cli, OptionSyntax) {
    const std::string input = path("in.fits");
    halconv::io::write_fits(input, random_fits(9, 7));
    CliRun r = run_cli("filter '" + input + "' '" + path("eq.fits") + "' --kernel=box:3 --mode=valid --device=cpu");
    ASSERT_EQ(r.status, 0) << r.output;
    r = run_cli("filter '" + input + "' '" + path("last.fits") +
                "' --kernel box:3 --mode full --mode valid --device cpu");
    ASSERT_EQ(r.status, 0) << r.output;
    const halconv::io::FitsImage eq = halconv::io::read_fits(path("eq.fits"));
    const halconv::io::FitsImage last = halconv::io::read_fits(path("last.fits"));
    EXPECT_EQ(eq.width, 7);
    EXPECT_EQ(eq.height, 5);
    EXPECT_EQ(last.width, 7);
    EXPECT_EQ(last.height, 5);
    EXPECT_EQ(eq.data, last.data);

    const std::vector<std::tuple<std::string, std::string>> refused = {
        {"tune --quiet stray", "unexpected argument stray (see halconv tune --help)"},
        {"bench-quick 512", "unexpected argument 512 (see halconv bench-quick --help)"},
        {"demo a.png b.png", "unexpected argument b.png (the demo takes one IMAGE.png)"},
        {"edges '" + input + "' '" + path("e.fits") + "' --staged --frobnicate", "unknown option --frobnicate"},
        {"unsharp '" + input + "' '" + path("u.fits") + "' --sigma", "--sigma needs a value"},
    };
    for (const auto &[args, message] : refused) {
        r = run_cli(args);
        EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
        EXPECT_THAT(r.output, HasSubstr("halconv: error: " + message)) << args;
    }
    EXPECT_FALSE(fs::exists(path("e.fits")));
    EXPECT_FALSE(fs::exists(path("u.fits")));
}

// The tool's working-memory budget: an image beyond it is refused from its header, with
// the budget named; a malformed budget is an error, not ignored.
TEST_F(Cli, ImagesBeyondTheMemoryBudgetAreRefused) {
    const std::string input = path("in.fits");
    halconv::io::write_fits(input, random_fits(100, 100));  // 10^4 samples, ~400 KB of working memory
    CliRun r = run_cli("filter '" + input + "' '" + path("out.fits") + "' --kernel box:3 --device cpu",
                       "HALCONV_MEMORY_LIMIT=200K ");
    EXPECT_EQ(r.status, 1) << r.output;
    EXPECT_THAT(r.output, HasSubstr("in.fits: an image of 100 x 100 (1 channel) needs about 391 KiB of working memory; "
                                    "the budget is 200 KiB (HALCONV_MEMORY_LIMIT"));
    EXPECT_FALSE(fs::exists(path("out.fits")));
    r = run_cli("filter '" + input + "' '" + path("out.fits") + "' --kernel box:3 --device cpu",
                "HALCONV_MEMORY_LIMIT=1M ");
    EXPECT_EQ(r.status, 0) << r.output;
    for (const std::string bad : {"lots", "-5", "0", "12Q", "99999999999999999999"}) {
        r = run_cli("filter '" + input + "' '" + path("bad.fits") + "' --kernel box:3 --device cpu",
                    "HALCONV_MEMORY_LIMIT=" + bad + " ");
        EXPECT_EQ(r.status, 1) << bad << "\n" << r.output;
        EXPECT_THAT(r.output, HasSubstr("allowed a positive number of bytes")) << bad;
    }
}

// A fill value is what an image sample may be (NaN and infinities included, the same in
// every command); a number beyond a double's range is refused, not made infinite.
TEST_F(Cli, FillValuesAreTheSameInEveryCommand) {
    const std::string input = path("in.fits");
    halconv::io::write_fits(input, random_fits(6, 5));
    for (const std::string command : {"filter", "edges", "unsharp"}) {
        const std::string kernel = command == "edges" ? "" : command == "filter" ? " --kernel box:3" : " --sigma 1";
        for (const std::string fill : {"nan", "inf", "-inf", "2.5"}) {
            const std::string output = path(command + fill + ".fits");
            const CliRun r = run_cli(command + " '" + input + "' '" + output + "'" + kernel +
                                     " --boundary constant --fill " + fill + " --device cpu");
            EXPECT_EQ(r.status, 0) << command << " --fill " << fill << "\n" << r.output;
            EXPECT_TRUE(fs::exists(output)) << command << " --fill " << fill;
        }
        const CliRun r = run_cli(command + " '" + input + "' '" + path("big.fits") + "'" + kernel + " --fill 1e400");
        EXPECT_EQ(r.status, 2) << command << "\n" << r.output;
        EXPECT_THAT(r.output, HasSubstr("--fill 1e400: allowed a number within a double's range")) << command;
        EXPECT_FALSE(fs::exists(path("big.fits")));
    }
    // filter's NaN fill: every output pixel whose window leaves the image is NaN, the rest
    // are finite (the input is).
    const halconv::io::FitsImage out = halconv::io::read_fits(path("filternan.fits"));
    for (int y = 0; y < out.height; y++) {
        for (int x = 0; x < out.width; x++) {
            const bool border = x == 0 || y == 0 || x == out.width - 1 || y == out.height - 1;
            EXPECT_EQ(std::isnan(out.data[size_t(y) * out.width + x]), border) << x << ", " << y;
        }
    }
}

TEST_F(Cli, ErrorsExitNonZeroWithOneLineAndNoOutput) {
    const std::string input = path("in.fits"), output = path("out.fits");
    halconv::io::write_fits(input, random_fits(8, 8));
    halconv::io::Image rgba;
    rgba.width = rgba.height = 4;
    rgba.channels.assign(3, std::vector<double>(16, 0.25));
    rgba.alpha.assign(16, 1.0);
    const std::string alpha_png = path("alpha.png");
    halconv::io::write_png(alpha_png, rgba);
    std::ofstream(path("corrupt.fits")) << std::string(3000, 'x');

    struct Case {
        std::string args;
        int status;
        std::string message;
    };
    const std::string io = "'" + input + "' '" + output + "' ";
    const std::vector<Case> cases = {
        {"filter " + io + "--kernel gauss", 1, "unknown kernel 'gauss'; allowed: gaussian:sigma=S"},
        {"filter " + io, 2, "--kernel SPEC is required"},
        {"filter " + io + "--kernel box:3 --mode diagonal", 2, "--mode diagonal: allowed valid, same, full"},
        {"filter " + io + "--kernel box:3 --boundary zero", 2, "allowed constant, nearest, reflect, mirror, wrap"},
        {"filter " + io + "--kernel box:3 --precision f8", 2, "--precision f8: allowed f64, f32, f16, f16f32"},
        {"filter " + io + "--kernel box:3 --fill x", 2, "--fill x: allowed a number within a double's range"},
        {"filter " + io + "--kernel box:3 --frobnicate 1", 2, "unknown option --frobnicate"},
        {"filter " + io + "--kernel box:3 --mode", 2, "--mode needs a value"},
        {"filter '" + input + "' --kernel box:3", 2, "give the input(s) and then the output"},
        {"filter '" + path("missing.fits") + "' '" + output + "' --kernel box:3", 1, "missing.fits: no such file"},
        {"filter '" + path("corrupt.fits") + "' '" + output + "' --kernel box:3", 1, "corrupt.fits: not a FITS file"},
        {"filter '" + input + "' '" + path("out.png") + "' --kernel box:3", 1, "keeps the input's format (.fits)"},
        {"filter '" + alpha_png + "' '" + path("out.png") + "' --kernel box:3 --mode valid", 1,
         "alpha channel, which is passed through unchanged: allowed only with --mode same"},
        {"filter " + io + "--kernel box:3 --algorithm im2tensor --precision f32 --device cpu", 1, "halconv: error:"},
        {"frobnicate", 2, "unknown command 'frobnicate'"},
    };
    for (const Case &c : cases) {
        const CliRun r = run_cli(c.args);
        EXPECT_EQ(r.status, c.status) << c.args << "\n" << r.output;
        EXPECT_THAT(r.output, HasSubstr(c.message)) << c.args;
        EXPECT_THAT(r.output, HasSubstr("halconv: error: ")) << c.args;
        EXPECT_FALSE(fs::exists(output)) << c.args;
        EXPECT_FALSE(fs::exists(path("out.png"))) << c.args;
    }
    for (const std::string command : {"--help", "filter --help", "--help filter"}) {
        const CliRun r = run_cli(command);
        EXPECT_EQ(r.status, 0) << command;
        EXPECT_THAT(r.output, HasSubstr("usage: halconv")) << command;
    }
}

// Edges of a FITS image against the float64 Laplacian of the blurred image (the two
// correlations of seed 001, reflect), pixels within float32 error of T left out.
TEST_F(Cli, EdgesMatchFloat64Definition) {
    halconv::io::FitsImage in = random_fits(41, 29);
    for (double &v : in.data) {
        v = static_cast<float>((v + 1) / 2);  // [0, 1), exact in float32 as the tool reads it
    }
    halconv::io::write_fits(path("in.fits"), in);
    const CliRun r = run_cli("edges '" + path("in.fits") + "' '" + path("edges.fits") + "' --threshold 0.05");
    ASSERT_EQ(r.status, 0) << r.output;
    const halconv::io::FitsImage out = halconv::io::read_fits(path("edges.fits"));
    ASSERT_EQ(out.width, 41);
    ASSERT_EQ(out.height, 29);
    const std::vector<double> g = {2.0 / 17, 4.0 / 17, 5.0 / 17, 4.0 / 17, 2.0 / 17};
    halconv::test::Image gauss{5, 5, {}};
    for (double a : g) {
        for (double b : g) {
            gauss.data.push_back(a * b);
        }
    }
    const auto blur = halconv::test::correlate_reference({in.width, in.height, in.data}, gauss, halconv::Mode::same,
                                                         halconv::Boundary::reflect, 0.0, false);
    const auto lap = halconv::test::correlate_reference(blur.value, {3, 3, {0, 1, 0, 1, -4, 1, 0, 1, 0}},
                                                        halconv::Mode::same, halconv::Boundary::reflect, 0.0, false);
    int edges = 0, checked = 0;
    for (size_t i = 0; i < out.data.size(); i++) {
        const double m = std::fabs(lap.value.data[i]);
        if (std::fabs(m - 0.05) > 1e-5) {
            ASSERT_EQ(out.data[i], m > 0.05 ? 1.0 : 0.0) << "pixel " << i;
            checked++;
        }
        edges += out.data[i] == 1.0;
    }
    EXPECT_GT(checked, 1100);
    EXPECT_GT(edges, 0);
    EXPECT_LT(edges, checked);

    // PNG in (colour as luma), 8-bit gray out, the same edges.
    halconv::io::Image png;
    png.width = in.width;
    png.height = in.height;
    png.channels.assign(3, std::vector<double>(in.data.size()));
    for (size_t i = 0; i < in.data.size(); i++) {
        png.channels[0][i] = png.channels[1][i] = png.channels[2][i] = std::round(in.data[i] * 255) / 255;
    }
    halconv::io::write_png(path("in.png"), png);
    const CliRun rp = run_cli("edges '" + path("in.png") + "' '" + path("edges.png") + "' --device cpu --staged");
    ASSERT_EQ(rp.status, 0) << rp.output;
    const halconv::io::Image edge_png = halconv::io::read_png(path("edges.png"));
    EXPECT_EQ(edge_png.channels.size(), 1u);
    EXPECT_EQ(edge_png.bit_depth, 8);
    for (double v : edge_png.channels[0]) {
        ASSERT_TRUE(v == 0.0 || v == 1.0) << v;
    }
}

// Unsharp mask of a FITS image: image + amount (image - blur), the blur of the
// float16-rounded image by the float16-rounded Gaussian; float32 sums.
TEST_F(Cli, UnsharpMatchesFloat64Definition) {
    halconv::io::FitsImage in = random_fits(37, 26);
    for (double &v : in.data) {
        v = static_cast<float>(v);
    }
    halconv::io::write_fits(path("in.fits"), in);
    const CliRun r = run_cli("unsharp '" + path("in.fits") + "' '" + path("out.fits") +
                             "' --sigma 2 --amount 1.5 --boundary mirror");
    ASSERT_EQ(r.status, 0) << r.output;
    const halconv::io::FitsImage out = halconv::io::read_fits(path("out.fits"));
    halconv::io::KernelTaps k = halconv::io::parse_kernel_spec("gaussian:sigma=2");
    const auto f16 = [](double v) {
        return halconv::double_from_float16_bits(halconv::float16_bits_from_double(static_cast<float>(v)));
    };
    halconv::test::Image img16{in.width, in.height, in.data};
    std::transform(img16.data.begin(), img16.data.end(), img16.data.begin(), f16);
    std::transform(k.taps.begin(), k.taps.end(), k.taps.begin(), f16);
    const auto blur = halconv::test::correlate_reference(img16, {k.width, k.height, k.taps}, halconv::Mode::same,
                                                         halconv::Boundary::mirror, 0.0, false);
    ASSERT_EQ(out.data.size(), in.data.size());
    for (size_t i = 0; i < out.data.size(); i++) {
        const double want = in.data[i] + 1.5 * (in.data[i] - blur.value.data[i]);
        // float32 sums of 169 products (<= 173 u32 * sum |k||x|) and a few float32 roundings.
        const double tol = 1.5 * 173 * 0x1p-24 * blur.magnitude.data[i] + 16 * 0x1p-24 * (1 + std::fabs(want));
        ASSERT_NEAR(out.data[i], want, tol) << "pixel " << i;
    }
}

TEST_F(Cli, InfoAndBenchQuick) {
    CliRun r = run_cli("info");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("Halide 21.0.0"));
    EXPECT_THAT(r.output, HasSubstr("halconv_edges_cpu_fused"));
    if (halconv::cuda_info().built) {
        EXPECT_THAT(r.output, HasSubstr("halconv_edges_cuda_fused"));
        EXPECT_THAT(r.output, HasSubstr("halconv_tensor_core_im2tensor_fused_f16f32"));
        EXPECT_THAT(r.output, HasSubstr(halconv::cuda_available() ? "(used)" : "no CUDA device is usable"));
    } else {
        EXPECT_THAT(r.output, Not(HasSubstr("halconv_edges_cuda_fused")));
        EXPECT_THAT(r.output, HasSubstr("CUDA pipelines: none (this halconv was built without CUDA"));
        EXPECT_THAT(r.output, HasSubstr("im2tensor_fused            -         (not in this build)"));
    }
    r = run_cli("bench-quick --device cpu --sizes 48 --kernels 3,4 --reps 1");
    ASSERT_EQ(r.status, 0) << r.output;
    for (const char *row : {"naive", "shared_tiled", "autoscheduled", "gaussian_blur", "gaussian_recursive", "log_",
                            "bilateral_r1", "bilateral_r2", "edges_fused", "edges_staged"}) {
        EXPECT_THAT(r.output, HasSubstr(row));
    }
    EXPECT_THAT(r.output, HasSubstr("    48    4"));
}

// The README's main job: `halconv demo` on the bundled photo writes every result and a
// timing table (the tensor-core rows only where a GPU is).
TEST_F(Cli, ReadmeDemoWritesEveryResult) {
    const CliRun r = run_cli("demo --out '" + path("demo") + "'");
    ASSERT_EQ(r.status, 0) << r.output;
    std::vector<std::string> files = {"edges",
                                      "gaussian_sigma12",
                                      "unsharp",
                                      "random31_auto",
                                      "random31_naive",
                                      "random31_shared_tiled",
                                      "random31_autoscheduled"};
    if (halconv::cuda_available()) {
        for (const char *tc :
             {"im2tensor", "im2tensor_fused", "im2tensor_atomic", "diagonal_unroll", "diagonal_unroll_m32n8k16"}) {
            files.push_back(std::string("random31_") + tc);
        }
        // The small-kernel pass says why it does not take the demo's kernel.
        EXPECT_THAT(r.output, HasSubstr("not run on the 31x31 kernel: sliding: halconv: kernel 31 x 31 is larger"));
    } else {
        EXPECT_THAT(r.output, HasSubstr("no CUDA device found: running on the CPU"));
    }
    for (const std::string &f : files) {
        const halconv::io::Image png = halconv::io::read_png(path("demo/" + f + ".png"));
        EXPECT_EQ(png.width, 512) << f;
        EXPECT_THAT(r.output, HasSubstr(f.rfind("random31_", 0) == 0 ? f.substr(9) : std::string("median ms")));
    }
    EXPECT_THAT(r.output, HasSubstr("edges          fused"));
    EXPECT_THAT(r.output, HasSubstr("edges          staged"));
}

// Every algorithm of the registry is named by `filter --help` and `info`, and runs
// through `filter --algorithm`; --verbose says what ran and why.
TEST_F(Cli, EveryAlgorithmIsNamedAndVerboseSaysWhatRan) {
    const CliRun help = run_cli("filter --help"), info = run_cli("info");
    ASSERT_EQ(help.status, 0);
    ASSERT_EQ(info.status, 0);
    const std::string input = path("in.fits");
    halconv::io::write_fits(input, random_fits(12, 9));
    for (const halconv::AlgorithmInfo &a : halconv::algorithms()) {
        EXPECT_THAT(help.output, HasSubstr(a.name));
        EXPECT_THAT(info.output, HasSubstr(a.name + " "));
        const bool runs_here = halconv::cuda_available() ||
                               std::find(a.devices.begin(), a.devices.end(), halconv::Device::cpu) != a.devices.end();
        if (!runs_here || (a.max_kernel_rank != 0 && a.max_kernel_rank < 3)) {  // random:3 is rank 3
            continue;
        }
        const std::string precision = a.tensor_cores ? "f16f32" : "f32";
        const CliRun r =
            run_cli("filter '" + input + "' '" + path(a.name + ".fits") + "' --kernel random:3 --algorithm " + a.name +
                    " --precision " + precision + " --verbose");
        EXPECT_EQ(r.status, 0) << r.output;
        EXPECT_THAT(r.output, HasSubstr("algorithm " + a.name + " (variant "));
        EXPECT_THAT(r.output, HasSubstr("requested"));
    }
    const CliRun r = run_cli("filter '" + input + "' '" + path("auto.fits") + "' --kernel box:3 --verbose");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr(": device "));
    EXPECT_THAT(r.output, ::testing::AnyOf(HasSubstr("auto: fastest predicted"), HasSubstr("no measurements")));
}

// `halconv tune` measures the CPU and writes a wisdom file that the next run reads.
TEST_F(Cli, TuneWritesWisdomThatFilterUses) {
    const std::string wisdom = path("wisdom.json");
    CliRun r = run_cli(
        "tune --device cpu --sizes 40x30 --kernels 1,3 --precisions f32 --modes same --reps 1 "
        "--output '" +
        wisdom + "' --quiet");
    ASSERT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("f32 same 40x30 K 3"));
    const halconv::Wisdom w = halconv::read_wisdom(wisdom);
    ASSERT_EQ(w.sections.size(), 1u);
    EXPECT_EQ(w.sections[0].device, halconv::identify_device(halconv::Device::cpu));
    const std::string input = path("in.fits");
    halconv::io::write_fits(input, random_fits(40, 30));
    r = run_cli("filter '" + input + "' '" + path("out.fits") + "' --kernel random:3 --device cpu --verbose",
                "HALCONV_WISDOM='" + wisdom + "' ");
    EXPECT_EQ(r.status, 0) << r.output;
    EXPECT_THAT(r.output, HasSubstr("by the wisdom file " + wisdom));
    const std::vector<std::tuple<std::string, int, std::string>> errors = {
        {"tune --sizes 0", 2, "allowed whole numbers from 1 to 65536"},
        {"tune --algorithms auto", 2, "not auto"},
        {"tune --precisions f8", 2, "allowed f64, f32, f16, f16f32"},
        {"tune extra", 2, "unexpected argument extra"},
        {"tune --device cpu --sizes 8 --kernels 3 --precisions f32 --modes same --reps 1 --quiet --output '" +
             dir_.string() + "'",
         1, "cannot write the wisdom file"},
    };
    for (const auto &[args, status, message] : errors) {
        const CliRun e = run_cli(args);
        EXPECT_EQ(e.status, status) << args << "\n" << e.output;
        EXPECT_THAT(e.output, HasSubstr(message)) << args;
    }
}

TEST_F(Cli, PipelineCommandErrors) {
    const std::string input = path("in.fits"), output = path("out.fits");
    halconv::io::write_fits(input, random_fits(8, 8));
    const std::string io = "'" + input + "' '" + output + "' ";
    const std::vector<std::tuple<std::string, int, std::string>> cases = {
        {"edges " + io + "--threshold -1", 2, "--threshold -1: allowed a number >= 0"},
        {"edges " + io + "--threshold", 2, "--threshold needs a value"},
        {"edges " + io + "--boundary zero", 2, "allowed constant, nearest, reflect, mirror, wrap"},
        {"edges '" + input + "'", 2, "give the input(s) and then the output"},
        {"edges '" + path("missing.fits") + "' '" + output + "'", 1, "missing.fits: no such file"},
        {"edges '" + input + "' '" + path("out.png") + "'", 1, "keeps the input's format (.fits)"},
        {"unsharp " + io, 2, "give the blur as --sigma S or as --kernel SPEC"},
        {"unsharp " + io + "--sigma 2 --kernel box:3", 2, "give the blur as --sigma S or as --kernel SPEC"},
        {"unsharp " + io + "--sigma 2 --amount x", 2, "--amount x: allowed a finite number"},
        {"unsharp " + io + "--sigma -2", 1, "sigma '-2'"},
        {"info extra", 2, "unexpected argument extra (see halconv info --help)"},
        {"bench-quick --sizes 0", 2, "allowed whole numbers from 1 to 16384"},
        {"bench-quick --frobnicate 1", 2, "unknown option --frobnicate"},
        {"demo --device gpu", 2, "--device gpu: allowed auto, cpu, cuda"},
    };
    for (const auto &[args, status, message] : cases) {
        const CliRun r = run_cli(args);
        EXPECT_EQ(r.status, status) << args << "\n" << r.output;
        EXPECT_THAT(r.output, HasSubstr(message)) << args;
        EXPECT_THAT(r.output, HasSubstr("halconv: error: ")) << args;
        EXPECT_FALSE(fs::exists(output)) << args;
        EXPECT_FALSE(fs::exists(path("out.png"))) << args;
    }
    for (const std::string command :
         {"edges --help", "unsharp --help", "info --help", "bench-quick --help", "tune --help"}) {
        const CliRun r = run_cli(command);
        EXPECT_EQ(r.status, 0) << command;
        EXPECT_THAT(r.output, HasSubstr("usage: halconv")) << command;
    }
}

}  // namespace
