// Whole-file reads, and writes that appear whole or not at all: written under a
// temporary name in the target's directory (same file system, so the rename is
// atomic), then renamed over the target; symbolic links are followed to the file they
// name, a replaced file's permissions kept, and temporaries removed on SIGINT/SIGTERM/
// SIGHUP once remove_temporaries_on_signals() was called.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>

#include "halconv/error.h"
#include "image_io.h"

namespace halconv::io {

uint64_t working_memory_budget() {
    if (const char *text = std::getenv("HALCONV_MEMORY_LIMIT"); text != nullptr && *text != '\0') {
        char *end = nullptr;
        errno = 0;
        const unsigned long long value = std::strtoull(text, &end, 10);
        int shift = 0;
        if (end != text && *end != '\0' && end[1] == '\0') {
            const char *units = "KMGT";
            if (const char *u = std::strchr(units, std::toupper(static_cast<unsigned char>(*end))); u != nullptr) {
                shift = 10 * int(u - units + 1);
                end++;
            }
        }
        if (end == text || *end != '\0' || errno == ERANGE || text[0] == '-' || value == 0 ||
            value > (std::numeric_limits<uint64_t>::max() >> shift)) {
            throw Error(ErrorCode::invalid_argument, std::string("HALCONV_MEMORY_LIMIT=") + text +
                                                         ": allowed a positive number of bytes, or with K, M, G, T");
        }
        return uint64_t(value) << shift;
    }
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) / 2 : uint64_t(1) << 32;
}

namespace {

// Bytes in the largest unit that keeps at least 10 of it, rounded up.
std::string human(uint64_t bytes) {
    const int shift = bytes < (uint64_t(10) << 20) ? 10 : bytes < (uint64_t(10) << 30) ? 20 : 30;
    const uint64_t unit = uint64_t(1) << shift;
    return std::to_string(bytes / unit + (bytes % unit != 0)) + (shift == 10 ? " KiB" : shift == 20 ? " MiB" : " GiB");
}

constexpr uint64_t int_max = uint64_t(std::numeric_limits<int>::max());

// Working bytes of an image of at most int_max per axis (so fewer than 2^62 samples),
// saturated at 2^64 - 1: 2^62 samples x 4 channels x 40 bytes do not fit 64 bits.
uint64_t working_bytes(uint64_t width, uint64_t height, int channels) {
    const uint64_t samples = width * height, per_sample = uint64_t(channels) * bytes_per_sample_held;
    const uint64_t most = std::numeric_limits<uint64_t>::max();
    return samples > most / per_sample ? most : samples * per_sample;
}

}  // namespace

bool image_fits(uint64_t width, uint64_t height, int channels, const ReadLimits &limits) {
    return width <= uint64_t(limits.max_edge) && height <= uint64_t(limits.max_edge) && width <= int_max &&
           height <= int_max && working_bytes(width, height, channels) <= limits.max_bytes;
}

void check_image_size(const std::string &name, uint64_t width, uint64_t height, int channels,
                      const ReadLimits &limits) {
    if (image_fits(width, height, channels, limits)) {
        return;
    }
    const std::string size = std::to_string(width) + " x " + std::to_string(height);
    if (width > uint64_t(limits.max_edge) || height > uint64_t(limits.max_edge)) {
        throw Error(ErrorCode::io, "cannot read " + name + ": " + size + " is larger than allowed here (" +
                                       std::to_string(limits.max_edge) + " per axis)");
    }
    if (width > int_max || height > int_max) {
        throw Error(ErrorCode::io, "cannot read " + name + ": " + size + " is beyond the largest image halconv takes");
    }
    const uint64_t bytes = working_bytes(width, height, channels);
    throw Error(ErrorCode::io, "cannot read " + name + ": an image of " + size + " (" + std::to_string(channels) +
                                   " channel" + (channels == 1 ? "" : "s") + ") needs about " + human(bytes) +
                                   " of working memory; the budget is " + human(limits.max_bytes) +
                                   " (HALCONV_MEMORY_LIMIT, default half the physical memory)");
}

std::vector<char> read_file(const std::string &path, uint64_t max_bytes) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
        throw Error(ErrorCode::io, "cannot read " + path + ": " +
                                       (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
    }
    if (const uintmax_t size = std::filesystem::file_size(path, ec); !ec && size > max_bytes) {
        throw Error(ErrorCode::io, "cannot read " + path + ": " + std::to_string(size) + " bytes, more than the " +
                                       std::to_string(max_bytes) + " allowed here");
    }
    std::FILE *file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) {
        throw Error(ErrorCode::io, "cannot read " + path + ": " + std::strerror(errno));
    }
    std::vector<char> bytes;
    char chunk[65536];
    size_t got = 0;
    while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0 && bytes.size() <= max_bytes) {
        bytes.insert(bytes.end(), chunk, chunk + got);
    }
    if (bytes.size() > max_bytes) {  // grew while being read
        std::fclose(file);
        throw Error(ErrorCode::io,
                    "cannot read " + path + ": more than the " + std::to_string(max_bytes) + " bytes allowed here");
    }
    const bool failed = std::ferror(file) != 0;
    std::fclose(file);
    if (failed) {
        throw Error(ErrorCode::io, "cannot read " + path + ": read error");
    }
    return bytes;
}

namespace {

// The temporary files being written, for the signal handler, which may only read
// lock-free atomics and fixed storage: a slot is free (0), being filled (1) or names a
// temporary file that exists (2).
struct PendingFile {
    std::atomic<int> state{0};
    char path[4096] = {};
};
PendingFile pending_files[32];

extern "C" void remove_pending_files(int signal_number) {
    for (PendingFile &f : pending_files) {
        if (f.state.load() == 2) {
            unlink(f.path);
        }
    }
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
}

// Claims a slot for a temporary file while it exists (none when all are taken or the
// path is too long: then only a signal during that write can leave the file behind).
class PendingSlot {
public:
    explicit PendingSlot(const std::string &path) {
        if (path.size() >= sizeof pending_files[0].path) {
            return;
        }
        for (PendingFile &f : pending_files) {
            int expected = 0;
            if (f.state.compare_exchange_strong(expected, 1)) {
                std::memcpy(f.path, path.c_str(), path.size() + 1);
                f.state.store(2);
                slot_ = &f;
                return;
            }
        }
    }
    ~PendingSlot() {
        if (slot_ != nullptr) {
            slot_->state.store(0);
        }
    }
    PendingSlot(const PendingSlot &) = delete;
    PendingSlot &operator=(const PendingSlot &) = delete;

private:
    PendingFile *slot_ = nullptr;
};

// The file a path finally names, its symbolic links followed (relative ones from the
// link's directory). Throws for a loop and for a link to nothing (as cp refuses to
// write through a dangling link).
std::filesystem::path final_target(const std::string &path) {
    namespace fs = std::filesystem;
    fs::path p(path);
    std::error_code ec;
    for (int links = 0; fs::is_symlink(p, ec); links++) {
        if (links == 40) {
            throw Error(ErrorCode::io, "cannot write " + path + ": too many levels of symbolic links");
        }
        const fs::path to = fs::read_symlink(p, ec);
        p = to.is_absolute() ? to : p.parent_path() / to;
    }
    if (p != fs::path(path) && !fs::exists(p, ec)) {
        throw Error(ErrorCode::io, "cannot write " + path + ": a symbolic link to " + p.string() +
                                       ", which does not exist (halconv writes through links, not to dangling ones)");
    }
    return p;
}

// A new file beside `target`, named .NAME.halconv-XXXXXX, created 0666 less the umask.
int create_temporary(const std::filesystem::path &target, std::string &name) {
    const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    static std::atomic<unsigned> counter{0};
    std::random_device entropy;
    for (int attempt = 0; attempt < 100; attempt++) {
        char suffix[16];
        std::snprintf(suffix, sizeof suffix, "%06x", (entropy() ^ counter.fetch_add(1)) & 0xffffffu);
        name = (dir / ("." + target.filename().string() + ".halconv-" + suffix)).string();
        const int fd = open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) {
            return fd;
        }
    }
    errno = EEXIST;
    return -1;
}

}  // namespace

void remove_temporaries_on_signals() {
    for (int s : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction current {};
        if (sigaction(s, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
            struct sigaction action {};
            action.sa_handler = remove_pending_files;
            sigemptyset(&action.sa_mask);
            sigaction(s, &action, nullptr);
        }
    }
}

void write_atomically(const std::string &path, const std::function<void(std::FILE *)> &write) {
    const std::filesystem::path target = final_target(path);
    struct stat old {};
    const bool replacing = stat(target.c_str(), &old) == 0;
    std::string tmp;
    const int fd = create_temporary(target, tmp);
    if (fd < 0) {
        throw Error(ErrorCode::io, "cannot write " + path + ": " + std::strerror(errno));
    }
    const PendingSlot pending(tmp);
    const auto fail = [&](int e) {
        unlink(tmp.c_str());
        return Error(ErrorCode::io, "cannot write " + path + ": " + std::strerror(e));
    };
    // A replaced file keeps its permission bits, and its owner and group where we may set them.
    if (replacing && (fchmod(fd, old.st_mode & 07777) != 0)) {
        const int e = errno;
        close(fd);
        throw fail(e);
    }
    if (replacing && fchown(fd, old.st_uid, old.st_gid) != 0) {
        [[maybe_unused]] const int ignored = fchown(fd, static_cast<uid_t>(-1), old.st_gid);
    }
    std::FILE *file = fdopen(fd, "wb");
    if (file == nullptr) {
        const int e = errno;
        close(fd);
        throw fail(e);
    }
    try {
        write(file);
        if (std::fflush(file) != 0 || std::ferror(file) != 0) {
            throw Error(ErrorCode::io, "cannot write " + path + ": " + std::strerror(errno));
        }
    } catch (...) {
        std::fclose(file);
        unlink(tmp.c_str());
        throw;
    }
    if (std::fclose(file) != 0) {
        throw fail(errno);
    }
    if (std::rename(tmp.c_str(), target.c_str()) != 0) {
        throw fail(errno);
    }
}

}  // namespace halconv::io
