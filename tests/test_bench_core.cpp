// The benchmark's host-side pieces: sweeps, the float64 gold it compares every variant
// with, seed 000's accuracy measure and the result tables. The GPU side runs on the GPU
// machine (scripts/bench-all); these decide whether its numbers mean what they say.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "bench_core.h"
#include "halconv/error.h"

namespace {

using namespace halconv::bench;

TEST(BenchSweep, EveryOddKernelTo63ThenEvery8thTo127) {
    const std::vector<int> k = kernel_sweep();
    ASSERT_EQ(k.size(), 32u + 8u);
    for (int i = 0; i < 32; i++) {
        EXPECT_EQ(k[size_t(i)], 2 * i + 1);
    }
    const std::vector<int> coarse(k.begin() + 32, k.end());
    EXPECT_EQ(coarse, (std::vector<int>{71, 79, 87, 95, 103, 111, 119, 127}));
}

TEST(BenchSweep, ParsesKernelAndSizeLists) {
    EXPECT_EQ(parse_kernels("sweep"), kernel_sweep());
    EXPECT_EQ(parse_kernels("3,15,31"), (std::vector<int>{3, 15, 31}));
    const std::vector<Size> s = parse_sizes("1024,3840x2160");
    ASSERT_EQ(s.size(), 2u);
    EXPECT_EQ(s[0].width, 1024);
    EXPECT_EQ(s[0].height, 1024);
    EXPECT_EQ(s[1].width, 3840);
    EXPECT_EQ(s[1].height, 2160);
}

TEST(BenchSweep, RejectsMalformedLists) {
    for (const char *bad : {"", "0", "-3", "3,x", "3.5", "2000000", "15,"}) {
        SCOPED_TRACE(bad);
        if (std::string(bad) == "15,") {
            EXPECT_EQ(parse_kernels(bad), (std::vector<int>{15}));  // a trailing comma is harmless
            continue;
        }
        EXPECT_THROW(parse_kernels(bad), halconv::Error);
    }
    for (const char *bad : {"", "x", "64x", "x64", "0x5", "4096x-1", "1024x768x2"}) {
        SCOPED_TRACE(bad);
        EXPECT_THROW(parse_sizes(bad), halconv::Error);
    }
    try {
        parse_sizes("64x0");
        FAIL() << "no error";
    } catch (const halconv::Error &e) {
        EXPECT_NE(std::string(e.what()).find("image height '0'"), std::string::npos) << e.what();
    }
}

Plane random_plane(int w, int h, std::mt19937_64 &rng) {
    Plane p(w, h);
    std::uniform_real_distribution<double> d(-1.0, 1.0);
    for (double &v : p.data) {
        v = d(rng);
    }
    return p;
}

// The gold against the definition, written out independently, on odd, even, non-square
// and degenerate shapes, with 1 and several threads (rows are split between threads).
TEST(BenchGold, MatchesTheDefinitionOnEveryShape) {
    std::mt19937_64 rng(std::random_device{}());
    struct Case {
        int w, h, kw, kh;
    };
    for (const Case c : {Case{17, 13, 3, 3}, Case{16, 10, 4, 2}, Case{9, 31, 5, 7}, Case{5, 5, 5, 5}, Case{1, 1, 1, 1},
                         Case{40, 1, 3, 1}, Case{7, 9, 1, 1}}) {
        SCOPED_TRACE(testing::Message() << c.w << "x" << c.h << " kernel " << c.kw << "x" << c.kh);
        const Plane image = random_plane(c.w, c.h, rng), kernel = random_plane(c.kw, c.kh, rng);
        for (int threads : {1, 3, 64}) {
            const Plane out = correlate_valid_gold(image, kernel, threads);
            ASSERT_EQ(out.width, c.w - c.kw + 1);
            ASSERT_EQ(out.height, c.h - c.kh + 1);
            for (int y = 0; y < out.height; y++) {
                for (int x = 0; x < out.width; x++) {
                    long double want = 0;
                    for (int j = 0; j < c.kh; j++) {
                        for (int i = 0; i < c.kw; i++) {
                            want += (long double)image.data[size_t((y + j) * c.w + x + i)] *
                                    kernel.data[size_t(j * c.kw + i)];
                        }
                    }
                    // Float64 sums of at most 35 terms of magnitude <= 1: within 35 ulp of 35.
                    EXPECT_NEAR(out.at(x, y), double(want), 35 * 35 * 1.2e-16);
                    EXPECT_EQ(correlate_valid_at(image, kernel, x, y), out.at(x, y));
                }
            }
        }
    }
}

TEST(BenchGold, IsCorrelationNotConvolution) {
    Plane image(3, 1), kernel(2, 1);
    image.data = {1, 2, 3};
    kernel.data = {10, 1};
    const Plane out = correlate_valid_gold(image, kernel, 2);
    EXPECT_EQ(out.data, (std::vector<double>{12, 23}));
}

TEST(BenchGold, RejectsAKernelLargerThanTheImage) {
    EXPECT_THROW(correlate_valid_gold(Plane(4, 4), Plane(5, 1), 1), halconv::Error);
}

TEST(BenchAccuracy, MedianApeInPercentAsSeed000Eq20) {
    Plane ref(5, 1);
    ref.data = {1.0, 2.0, 4.0, 0.0, -8.0};
    // APE: 10 %, 5 %, 0 %, 0 (reference 0), 25 % (|p - r| / |r|).
    const ApeSummary a = ape_summary(ref, {1.1, 2.1, 4.0, 123.0, -10.0});
    EXPECT_NEAR(a.median, 5.0, 1e-12);
    EXPECT_NEAR(a.max, 25.0, 1e-12);
    EXPECT_GE(a.p95, a.median);
    EXPECT_LE(a.p95, a.max);
}

TEST(BenchAccuracy, NonFiniteResultsAreInfiniteErrors) {
    Plane ref(3, 1);
    ref.data = {1.0, 1.0, 1.0};
    const ApeSummary a = ape_summary(ref, {1.0, NAN, 1.0});
    EXPECT_EQ(a.median, 0.0);
    EXPECT_TRUE(std::isinf(a.max));
    EXPECT_THROW(ape_summary(ref, {1.0, 1.0}), halconv::Error);
}

TEST(BenchTable, CsvQuotesAndJsonTypesCells) {
    Table t({"variant", "K", "median_ms", "note"});
    t.add_row();
    t.set("variant", "cufft");
    t.set("K", int64_t(15));
    t.set("median_ms", 0.5);
    t.set("note", "padded, \"f16\"\nline");
    t.add_row();
    t.set("variant", "npp");
    t.set("median_ms", std::nan(""));  // not finite: left empty, null in JSON
    EXPECT_EQ(t.rows(), 2u);
    EXPECT_EQ(t.cell(0, "K"), "15");
    EXPECT_EQ(t.csv(), "variant,K,median_ms,note\ncufft,15,0.5,\"padded, \"\"f16\"\"\nline\"\nnpp,,,\n");
    // The JSON read back: metadata first as strings, numbers as numbers, empty cells null.
    const nlohmann::ordered_json json = nlohmann::ordered_json::parse(t.json({{"device", "H100 \"SXM\""}}));
    EXPECT_EQ(json.begin().key(), "device");
    EXPECT_EQ(json["device"], "H100 \"SXM\"");
    ASSERT_EQ(json["rows"].size(), 2u);
    EXPECT_EQ(json["rows"][0].dump(), R"({"variant":"cufft","K":15,"median_ms":0.5,"note":"padded, \"f16\"\nline"})");
    EXPECT_EQ(json["rows"][1].dump(), R"({"variant":"npp","K":null,"median_ms":null,"note":null})");
    EXPECT_THROW(t.set("nope", 1.0), halconv::Error);
    Table empty({"a"});
    EXPECT_THROW(empty.set("a", 1.0), halconv::Error);
    EXPECT_EQ(nlohmann::ordered_json::parse(empty.json({})).dump(), R"({"rows":[]})");
}

TEST(BenchTable, WritesFilesWhole) {
    const auto dir = std::filesystem::temp_directory_path() / ("halconv_bench_core_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string path = (dir / "t.csv").string();
    write_text_file(path, "a,b\n1,2\n");
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(text.str(), "a,b\n1,2\n");
    EXPECT_FALSE(std::filesystem::exists(path + ".partial"));
    EXPECT_THROW(write_text_file((dir / "missing" / "t.csv").string(), "x"), halconv::Error);
    std::filesystem::remove_all(dir);
}

}  // namespace
