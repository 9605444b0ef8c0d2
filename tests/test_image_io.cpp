// PNG reading and writing (src/io): exact round trips for every supported layout and
// depth, palette and low-depth files expanded, clamping and rounding on write, and the
// error paths — each a halconv::Error naming the file, with no partial output left.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <png.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "halconv/error.h"
#include "image_io.h"
#include "test_support.h"

namespace fs = std::filesystem;
using halconv::io::Image;
using ::testing::HasSubstr;

namespace {

// A fresh, empty directory per test.
class ImageIo : public ::testing::Test {
protected:
    void SetUp() override {
        const auto *info = ::testing::UnitTest::GetInstance()->current_test_info();
        dir_ = fs::temp_directory_path() /
               ("halconv-io-" + std::string(info->name()) + "-" + std::to_string(halconv::test::rng()()));
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string &name) const { return (dir_ / name).string(); }
    std::vector<std::string> entries() const {
        std::vector<std::string> names;
        for (const auto &e : fs::directory_iterator(dir_)) {
            names.push_back(e.path().filename().string());
        }
        return names;
    }
    static void write_bytes(const std::string &p, const std::string &bytes) {
        std::ofstream(p, std::ios::binary) << bytes;
    }
    static std::string read_bytes(const std::string &p) {
        std::ifstream in(p, std::ios::binary);
        return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
    }
    // The error's message when f throws halconv::Error; fails the test otherwise.
    template <typename F>
    static std::string error_of(F &&f) {
        try {
            f();
        } catch (const halconv::Error &e) {
            return e.what();
        }
        ADD_FAILURE() << "no halconv::Error thrown";
        return {};
    }

    fs::path dir_;
};

// Random samples on the codes of the given depth, so a round trip must be exact.
Image random_image(int width, int height, int colors, bool alpha, int bit_depth) {
    Image image;
    image.width = width;
    image.height = height;
    image.bit_depth = bit_depth;
    const int top = (1 << bit_depth) - 1;
    std::uniform_int_distribution<int> code(0, top);
    auto fill = [&](std::vector<double> &plane) {
        plane.resize(size_t(width) * height);
        for (double &v : plane) {
            v = double(code(halconv::test::rng())) / top;
        }
    };
    image.channels.resize(colors);
    for (auto &plane : image.channels) {
        fill(plane);
    }
    if (alpha) {
        fill(image.alpha);
    }
    return image;
}

struct Layout {
    int colors;
    bool alpha;
    int bit_depth;
};

class PngRoundTrip : public ImageIo, public ::testing::WithParamInterface<Layout> {};

TEST_P(PngRoundTrip, IsExact) {
    const Layout l = GetParam();
    for (auto [w, h] : {std::pair{1, 1}, {7, 3}, {64, 65}}) {
        const Image in = random_image(w, h, l.colors, l.alpha, l.bit_depth);
        const std::string p = path("round.png");
        halconv::io::write_png(p, in);
        const Image out = halconv::io::read_png(p);
        ASSERT_EQ(out.width, w);
        ASSERT_EQ(out.height, h);
        ASSERT_EQ(out.bit_depth, l.bit_depth);
        ASSERT_EQ(out.channels.size(), size_t(l.colors));
        ASSERT_EQ(out.has_alpha(), l.alpha);
        for (int c = 0; c < l.colors; c++) {
            EXPECT_EQ(out.channels[c], in.channels[c]) << "channel " << c << " of " << w << "x" << h;
        }
        EXPECT_EQ(out.alpha, in.alpha);
        EXPECT_EQ(entries(), std::vector<std::string>{"round.png"});  // no temporary left behind
    }
}

INSTANTIATE_TEST_SUITE_P(Layouts, PngRoundTrip,
                         ::testing::Values(Layout{1, false, 8}, Layout{1, true, 8}, Layout{3, false, 8},
                                           Layout{3, true, 8}, Layout{1, false, 16}, Layout{1, true, 16},
                                           Layout{3, false, 16}, Layout{3, true, 16}),
                         [](const auto &param_info) {
                             const Layout l = param_info.param;
                             return std::string(l.colors == 3 ? "rgb" : "gray") + (l.alpha ? "a" : "") +
                                    std::to_string(l.bit_depth);
                         });

TEST_F(ImageIo, WriteClampsAndRounds) {
    Image in;
    in.width = 5;
    in.height = 1;
    in.channels = {{-0.5, 1.5, std::nan(""), 0.5, 100.4 / 255}};
    const std::string p = path("clamp.png");
    halconv::io::write_png(p, in);
    const Image out = halconv::io::read_png(p);
    const std::vector<double> expected = {0.0, 1.0, 0.0, 128.0 / 255, 100.0 / 255};
    EXPECT_EQ(out.channels[0], expected);
}

// A 4-colour palette with one transparent entry, at 2 bits per pixel, written with
// libpng directly: read back as RGB plus alpha.
TEST_F(ImageIo, PaletteBecomesRgbWithAlpha) {
    const std::string p = path("palette.png");
    {
        std::FILE *f = std::fopen(p.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, nullptr, nullptr, nullptr);
        png_infop info = png_create_info_struct(png);
        png_init_io(png, f);
        png_set_IHDR(png, info, 4, 1, 2, PNG_COLOR_TYPE_PALETTE, PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                     PNG_FILTER_TYPE_DEFAULT);
        png_color palette[4] = {{0, 0, 0}, {255, 0, 0}, {0, 255, 0}, {10, 20, 30}};
        png_set_PLTE(png, info, palette, 4);
        png_byte trans[1] = {0};  // entry 0 fully transparent, the others opaque
        png_set_tRNS(png, info, trans, 1, nullptr);
        png_write_info(png, info);
        png_byte row[1] = {0b00011011};  // indices 0, 1, 2, 3
        png_write_row(png, row);
        png_write_end(png, nullptr);
        png_destroy_write_struct(&png, &info);
        std::fclose(f);
    }
    const Image out = halconv::io::read_png(p);
    ASSERT_EQ(out.channels.size(), 3u);
    ASSERT_TRUE(out.has_alpha());
    EXPECT_EQ(out.channels[0], (std::vector<double>{0, 1, 0, 10.0 / 255}));
    EXPECT_EQ(out.channels[1], (std::vector<double>{0, 0, 1, 20.0 / 255}));
    EXPECT_EQ(out.channels[2], (std::vector<double>{0, 0, 0, 30.0 / 255}));
    EXPECT_EQ(out.alpha, (std::vector<double>{0, 1, 1, 1}));
}

TEST_F(ImageIo, BadFilesAreTypedErrorsNamingTheFile) {
    const std::string good = path("good.png");
    halconv::io::write_png(good, random_image(32, 32, 3, false, 8));
    const std::string bytes = read_bytes(good);

    const std::string missing = path("missing.png");
    EXPECT_THAT(error_of([&] { halconv::io::read_png(missing); }), HasSubstr(missing));

    const std::string empty = path("empty.png");
    write_bytes(empty, "");
    EXPECT_THAT(error_of([&] { halconv::io::read_png(empty); }), HasSubstr(empty + ": the file is empty"));

    const std::string text = path("text.png");
    write_bytes(text, "P2\n2 2\n255\n0 0 0 0\n");
    EXPECT_THAT(error_of([&] { halconv::io::read_png(text); }), HasSubstr(text + ": not a PNG file"));

    const std::string dir = path("a-directory.png");
    fs::create_directory(dir);
    EXPECT_THAT(error_of([&] { halconv::io::read_png(dir); }), HasSubstr(dir));

    // Every truncation point inside the file, and a flipped byte in each region.
    for (size_t cut : {size_t(9), size_t(20), size_t(40), bytes.size() / 2, bytes.size() - 13}) {
        const std::string truncated = path("truncated.png");
        write_bytes(truncated, bytes.substr(0, cut));
        EXPECT_THAT(error_of([&] { halconv::io::read_png(truncated); }), HasSubstr(truncated)) << "cut at " << cut;
    }
    for (size_t at : {size_t(16), size_t(30), bytes.size() / 2}) {
        std::string corrupt_bytes = bytes;
        corrupt_bytes[at] = char(corrupt_bytes[at] ^ 0x5a);
        const std::string corrupt = path("corrupt.png");
        write_bytes(corrupt, corrupt_bytes);
        EXPECT_THAT(error_of([&] { halconv::io::read_png(corrupt); }), HasSubstr(corrupt)) << "byte " << at;
    }
}

TEST_F(ImageIo, FailedWritesLeaveNoFile) {
    // Nothing to encode: rejected before any file is created.
    Image empty;
    const std::string p = path("out.png");
    EXPECT_THAT(error_of([&] { halconv::io::write_png(p, empty); }), HasSubstr(p));
    Image bad_depth = random_image(4, 4, 1, false, 8);
    bad_depth.bit_depth = 12;
    EXPECT_THAT(error_of([&] { halconv::io::write_png(p, bad_depth); }), HasSubstr("allowed 8, 16"));
    Image short_channel = random_image(4, 4, 3, false, 8);
    short_channel.channels[2].pop_back();
    EXPECT_THAT(error_of([&] { halconv::io::write_png(p, short_channel); }), HasSubstr(p));
    EXPECT_TRUE(entries().empty());

    // A directory that does not exist.
    const std::string nowhere = path("no-such-dir/out.png");
    EXPECT_THAT(error_of([&] { halconv::io::write_png(nowhere, random_image(4, 4, 1, false, 8)); }),
                HasSubstr(nowhere));

    // The target is a directory: the rename fails and the temporary is removed.
    const std::string target_dir = path("target");
    fs::create_directory(target_dir);
    fs::create_directory(target_dir + "/inside");
    EXPECT_THAT(error_of([&] { halconv::io::write_png(target_dir, random_image(4, 4, 1, false, 8)); }),
                HasSubstr(target_dir));
    EXPECT_EQ(entries(), std::vector<std::string>{"target"});

    // A writer that fails half-way keeps an existing file as it was.
    const std::string existing = path("existing.png");
    write_bytes(existing, "old contents");
    EXPECT_THROW(halconv::io::write_atomically(existing,
                                               [](std::FILE *f) {
                                                   std::fputs("partial", f);
                                                   throw halconv::Error("stopped");
                                               }),
                 halconv::Error);
    EXPECT_EQ(read_bytes(existing), "old contents");
    EXPECT_EQ(entries().size(), 2u);  // target/ and existing.png
}

}  // namespace
