// PNG reading and writing (src/io): exact round trips for every supported layout and
// depth, palette and low-depth files expanded, clamping and rounding on write, and the
// error paths — each a halconv::Error naming the file, with no partial output left.
#include <fitsio.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <png.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
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
                                                   throw halconv::Error(halconv::ErrorCode::io, "stopped");
                                               }),
                 halconv::Error);
    EXPECT_EQ(read_bytes(existing), "old contents");
    EXPECT_EQ(entries().size(), 2u);  // target/ and existing.png
}

// The bytes of a PNG whose IHDR announces width x height (8-bit gray), then an empty
// IDAT, CRCs valid: a reader must refuse it from the header alone.
std::string png_header_only(uint32_t width, uint32_t height) {
    const auto be32 = [](uint32_t v) {
        return std::string{char(v >> 24), char(v >> 16 & 0xff), char(v >> 8 & 0xff), char(v & 0xff)};
    };
    const auto chunk = [&](const std::string &type_and_data) {
        const uint32_t crc =
            uint32_t(crc32(0, reinterpret_cast<const Bytef *>(type_and_data.data()), uInt(type_and_data.size())));
        return be32(uint32_t(type_and_data.size() - 4)) + type_and_data + be32(crc);
    };
    return std::string("\x89PNG\r\n\x1a\n", 8) +
           chunk("IHDR" + be32(width) + be32(height) + std::string{8, 0, 0, 0, 0}) + chunk("IDAT");
}

// Readers check an image's size against the working-memory budget from the header,
// before they allocate: a 30000 x 30000 header is refused at once (it would need about 34 GiB).
TEST_F(ImageIo, ImagesBeyondTheMemoryBudgetAreRefusedFromTheHeader) {
    halconv::io::ReadLimits eight_gib;
    eight_gib.max_bytes = uint64_t(8) << 30;
    const std::string huge = png_header_only(30000, 30000);
    EXPECT_THAT(error_of([&] {
                    halconv::io::read_png_bytes("huge.png", std::vector<char>(huge.begin(), huge.end()), eight_gib);
                }),
                HasSubstr("huge.png: an image of 30000 x 30000 (1 channel) needs about 34 GiB of working memory; "
                          "the budget is 8192 MiB"));
    const std::string small = path("small.png");
    halconv::io::write_png(small, random_image(100, 80, 3, false, 8));
    halconv::io::ReadLimits tight;
    tight.max_bytes = 100 * 80 * 3 * halconv::io::bytes_per_sample_held - 1;
    EXPECT_THAT(error_of([&] { halconv::io::read_png(small, tight); }), HasSubstr("needs about"));
    tight.max_bytes++;
    EXPECT_EQ(halconv::io::read_png(small, tight).width, 100);
    tight.max_edge = 99;
    EXPECT_THAT(error_of([&] { halconv::io::read_png(small, tight); }), HasSubstr("(99 per axis)"));

    halconv::io::FitsImage f;  // an 11520-byte file
    f.width = 50;
    f.height = 40;
    f.data.assign(2000, 1.0);
    halconv::io::write_fits(path("f.fits"), f);
    halconv::io::ReadLimits fits_tight;
    fits_tight.max_bytes = 2000 * halconv::io::bytes_per_sample_held - 1;
    EXPECT_THAT(error_of([&] { halconv::io::read_fits(path("f.fits"), fits_tight); }), HasSubstr("needs about"));
}

// libpng's default limit of 10^6 pixels per row does not apply: halconv's budget does
// (full mode on a 1 x 10^6 image writes rows longer than that).
TEST_F(ImageIo, RowsLongerThanAMillionPixels) {
    const Image in = random_image(1000005, 1, 1, false, 8);
    halconv::io::write_png(path("long.png"), in);
    const Image out = halconv::io::read_png(path("long.png"));
    EXPECT_EQ(out.width, 1000005);
    EXPECT_EQ(out.channels, in.channels);
}

// Replacing a file keeps its permission bits; a symbolic link is written through (the
// link stays, its target changes); a link to nothing is refused before anything is
// written; a new file gets 0666 less the umask.
TEST_F(ImageIo, ReplacedFilesKeepTheirModeAndLinks) {
    const auto mode_of = [](const std::string &p) { return fs::status(p).permissions() & fs::perms::all; };
    const std::string secret = path("secret.png");
    write_bytes(secret, "old");
    fs::permissions(secret, fs::perms::owner_read | fs::perms::owner_write);
    halconv::io::write_png(secret, random_image(4, 3, 1, false, 8));
    EXPECT_EQ(mode_of(secret), fs::perms::owner_read | fs::perms::owner_write);
    EXPECT_EQ(halconv::io::read_png(secret).width, 4);

    const std::string shared = path("shared.png");
    write_bytes(shared, "old");
    fs::permissions(shared, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
    halconv::io::write_png(shared, random_image(4, 3, 1, false, 8));
    EXPECT_EQ(mode_of(shared), fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);

    fs::create_directory(path("real"));
    const std::string real = path("real/target.png"), link = path("link.png");
    write_bytes(real, "old");
    fs::create_symlink("real/target.png", link);  // relative to the link's directory
    halconv::io::write_png(link, random_image(5, 2, 1, false, 8));
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(halconv::io::read_png(real).width, 5);

    const std::string dangling = path("dangling.png");
    fs::create_symlink("nowhere/none.png", dangling);
    EXPECT_THAT(error_of([&] { halconv::io::write_png(dangling, random_image(4, 3, 1, false, 8)); }),
                HasSubstr("does not exist"));
    EXPECT_TRUE(fs::is_symlink(dangling));
    EXPECT_FALSE(fs::exists(path("nowhere")));

    const mode_t mask = umask(022);
    halconv::io::write_png(path("new.png"), random_image(4, 3, 1, false, 8));
    umask(mask);
    EXPECT_EQ(mode_of(path("new.png")),
              fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read | fs::perms::others_read);
    for (const std::string &name : entries()) {
        EXPECT_EQ(name.find(".halconv-"), std::string::npos) << name;
    }
}

// A process stopped by SIGTERM or SIGINT while a file is being written leaves neither
// the temporary file nor a changed target: a child writes half a file, signals itself.
TEST_F(ImageIo, SignalsDuringAWriteRemoveTheTemporary) {
    for (int signal_number : {SIGTERM, SIGINT}) {
        const std::string target = path("out.png");
        write_bytes(target, "old contents");
        std::fflush(nullptr);
        const pid_t child = fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            // The premise: the signal's default action. A shell's background job starts
            // with SIGINT ignored, and the handler (rightly) leaves ignored signals alone.
            std::signal(signal_number, SIG_DFL);
            halconv::io::remove_temporaries_on_signals();
            halconv::io::write_atomically(target, [&](std::FILE *f) {
                std::fputs("partial", f);
                std::fflush(f);
                raise(signal_number);
            });
            _exit(0);  // not reached: the signal ends the process
        }
        int status = 0;
        ASSERT_EQ(waitpid(child, &status, 0), child);
        ASSERT_TRUE(WIFSIGNALED(status)) << "the child was not ended by its signal";
        EXPECT_EQ(WTERMSIG(status), signal_number);
        EXPECT_EQ(read_bytes(target), "old contents");
        EXPECT_EQ(entries(), std::vector<std::string>{"out.png"});
    }
}

}  // namespace

namespace {

// A FITS file of any BITPIX written with cfitsio directly: raw integer (or float) codes,
// optional BSCALE/BZERO and BLANK, and the axes given.
void write_raw_fits(const std::string &path, int bitpix, std::vector<long> axes, const std::vector<double> &raw,
                    double bscale = 1.0, double bzero = 0.0, const long long *blank = nullptr) {
    fitsfile *f = nullptr;
    int status = 0;
    fits_create_diskfile(&f, path.c_str(), &status);
    fits_create_img(f, bitpix, int(axes.size()), axes.data(), &status);
    if (bscale != 1.0 || bzero != 0.0) {
        fits_write_key(f, TDOUBLE, "BSCALE", &bscale, nullptr, &status);
        fits_write_key(f, TDOUBLE, "BZERO", &bzero, nullptr, &status);
        fits_set_bscale(f, 1.0, 0.0, &status);  // write the codes as given
    }
    if (blank != nullptr) {
        long long b = *blank;
        fits_write_key(f, TLONGLONG, "BLANK", &b, nullptr, &status);
    }
    if (!raw.empty()) {
        fits_write_img(f, TDOUBLE, 1, long(raw.size()), const_cast<double *>(raw.data()), &status);
    }
    fits_close_file(f, &status);
    ASSERT_EQ(status, 0) << "test file " << path;
}

TEST_F(ImageIo, FitsFloatRoundTrip) {
    std::uniform_real_distribution<double> u(-1e6, 1e6);
    for (int bitpix : {-32, -64}) {
        for (auto [w, h] : {std::pair{1, 1}, {5, 3}, {33, 70}}) {
            halconv::io::FitsImage in;
            in.width = w;
            in.height = h;
            in.bitpix = bitpix;
            in.data.resize(size_t(w) * h);
            for (double &v : in.data) {
                v = u(halconv::test::rng());
            }
            // NaN, +-Inf and subnormals come back as written (cfitsio's null check would
            // make the infinities NaN and the subnormals 0).
            in.data[0] = std::nan("");
            if (in.data.size() > 3) {
                in.data[1] = std::numeric_limits<double>::infinity();
                in.data[2] = -std::numeric_limits<double>::infinity();
                in.data[3] = bitpix == -32 ? double(std::numeric_limits<float>::denorm_min()) * 3
                                           : std::numeric_limits<double>::denorm_min() * 3;
            }
            const std::string p = path("round.fits");
            halconv::io::write_fits(p, in);
            const halconv::io::FitsImage out = halconv::io::read_fits(p);
            ASSERT_EQ(out.width, w);
            ASSERT_EQ(out.height, h);
            EXPECT_EQ(out.bitpix, bitpix);
            EXPECT_TRUE(std::isnan(out.data[0]));
            for (size_t i = 1; i < in.data.size(); i++) {
                const double expected = bitpix == -32 ? double(float(in.data[i])) : in.data[i];
                ASSERT_EQ(out.data[i], expected) << "sample " << i << ", BITPIX " << bitpix;
            }
            EXPECT_EQ(fs::file_size(p) % 2880, 0u);
            EXPECT_EQ(entries(), std::vector<std::string>{"round.fits"});
        }
    }
}

TEST_F(ImageIo, FitsIntegerBitpixScaledToFloat) {
    // 3 x 2, NAXIS1 = 3 is the width; codes chosen within every type's range.
    const std::vector<double> codes = {0, 1, 2, 100, 7, 127};
    const long long blank = 7;
    for (int bitpix : {8, 16, 32, 64}) {
        const std::string p = path("int" + std::to_string(bitpix) + ".fits");
        write_raw_fits(p, bitpix, {3, 2}, codes, 0.5, 10.0, &blank);
        const halconv::io::FitsImage img = halconv::io::read_fits(p);
        ASSERT_EQ(img.width, 3);
        ASSERT_EQ(img.height, 2);
        EXPECT_EQ(img.bitpix, bitpix);
        for (size_t i = 0; i < codes.size(); i++) {
            if (codes[i] == double(blank)) {
                EXPECT_TRUE(std::isnan(img.data[i])) << "BLANK pixel, BITPIX " << bitpix;
            } else {
                EXPECT_EQ(img.data[i], codes[i] * 0.5 + 10.0) << "sample " << i << ", BITPIX " << bitpix;
            }
        }
    }
    // Unsigned 16-bit the usual way: BITPIX 16 with BZERO 32768.
    const std::string p = path("uint16.fits");
    write_raw_fits(p, 16, {2, 1}, {-32768, 32767}, 1.0, 32768.0);
    EXPECT_EQ(halconv::io::read_fits(p).data, (std::vector<double>{0, 65535}));
}

TEST_F(ImageIo, FitsAxesOtherThan2dAreRefused) {
    const std::string flat3d = path("cube1.fits");
    write_raw_fits(flat3d, -32, {4, 3, 1}, std::vector<double>(12, 1.5));
    EXPECT_EQ(halconv::io::read_fits(flat3d).data, std::vector<double>(12, 1.5));

    const std::string cube = path("cube2.fits");
    write_raw_fits(cube, -32, {4, 3, 2}, std::vector<double>(24, 1.0));
    EXPECT_THAT(error_of([&] { halconv::io::read_fits(cube); }), HasSubstr(cube + ": the primary HDU holds no 2D"));

    const std::string line = path("line.fits");
    write_raw_fits(line, -32, {5}, std::vector<double>(5, 1.0));
    EXPECT_THAT(error_of([&] { halconv::io::read_fits(line); }), HasSubstr("NAXIS = 1"));

    const std::string none = path("none.fits");
    write_raw_fits(none, 8, {}, {});
    EXPECT_THAT(error_of([&] { halconv::io::read_fits(none); }), HasSubstr("NAXIS = 0"));
}

TEST_F(ImageIo, BadFitsFilesAreTypedErrorsNamingTheFile) {
    const std::string good = path("good.fits");
    halconv::io::FitsImage img;
    img.width = 40;
    img.height = 30;
    img.data.assign(1200, 0.25);
    halconv::io::write_fits(good, img);
    const std::string bytes = read_bytes(good);

    const std::string empty = path("empty.fits");
    write_bytes(empty, "");
    EXPECT_THAT(error_of([&] { halconv::io::read_fits(empty); }), HasSubstr(empty + ": the file is empty"));
    const std::string text = path("text.fits");
    write_bytes(text, std::string(3000, 'x'));
    EXPECT_THAT(error_of([&] { halconv::io::read_fits(text); }), HasSubstr(text + ": not a FITS file"));
    const std::string missing = path("missing.fits");
    EXPECT_THAT(error_of([&] { halconv::io::read_fits(missing); }), HasSubstr(missing));
    for (size_t cut : {size_t(100), size_t(2880), size_t(2880 + 100), bytes.size() - 2880}) {
        const std::string truncated = path("truncated.fits");
        write_bytes(truncated, bytes.substr(0, cut));
        EXPECT_THAT(error_of([&] { halconv::io::read_fits(truncated); }), HasSubstr(truncated)) << "cut at " << cut;
    }
    // A header card made nonsense: NAXIS1 = -5.
    std::string bad_axis = bytes;
    const size_t at = bad_axis.find("NAXIS1  =");
    ASSERT_NE(at, std::string::npos);
    bad_axis.replace(at + 10, 20, std::string(18, ' ') + "-5");
    const std::string corrupt = path("corrupt.fits");
    write_bytes(corrupt, bad_axis);
    EXPECT_THAT(error_of([&] { halconv::io::read_fits(corrupt); }), HasSubstr(corrupt));

    // A string of doubled quotes opening before column 11 (found by fuzzing: cfitsio 4.2
    // writes past a stack buffer on it) is refused before cfitsio reads the header; a
    // HIERARCH card's later '=' and a quoted string in a COMMENT are fine.
    for (const std::string &card :
         {std::string("IS2  = ") + std::string(73, '\''), std::string("NAXIS3  =") + std::string(71, '\'')}) {
        std::string quotes = bytes;
        quotes.replace(80 * 5, 80, card);
        const std::string early = path("early-string.fits");
        write_bytes(early, quotes);
        EXPECT_THAT(error_of([&] { halconv::io::read_fits(early); }),
                    HasSubstr(early + ": invalid FITS header (card 6 opens a string value before column 11"));
    }
    std::string fine = bytes;
    fine.replace(80 * 5, 80, ("HIERARCH ESO DET = 'x'" + std::string(58, ' ')));
    fine.replace(80 * 6, 80, ("COMMENT ='" + std::string(70, '\'')));
    const std::string later = path("later-string.fits");
    write_bytes(later, fine);
    EXPECT_EQ(halconv::io::read_fits(later).width, 40);

    halconv::io::FitsImage int16 = img;
    int16.bitpix = 16;
    const std::string out = path("out.fits");
    EXPECT_THAT(error_of([&] { halconv::io::write_fits(out, int16); }), HasSubstr("allowed -32, -64"));
    EXPECT_FALSE(fs::exists(out));
}

}  // namespace
