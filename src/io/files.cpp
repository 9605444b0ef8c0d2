// Whole-file reads, and writes that appear whole or not at all: written under a
// temporary name in the target directory (same file system, so the rename is atomic),
// then renamed.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "halconv/error.h"
#include "image_io.h"

namespace halconv::io {

std::vector<char> read_file(const std::string &path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) {
        throw Error(ErrorCode::io, "cannot read " + path + ": " +
                                       (std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
    }
    std::FILE *file = std::fopen(path.c_str(), "rb");
    if (file == nullptr) {
        throw Error(ErrorCode::io, "cannot read " + path + ": " + std::strerror(errno));
    }
    std::vector<char> bytes;
    char chunk[65536];
    size_t got = 0;
    while ((got = std::fread(chunk, 1, sizeof chunk, file)) > 0) {
        bytes.insert(bytes.end(), chunk, chunk + got);
    }
    const bool failed = std::ferror(file) != 0;
    std::fclose(file);
    if (failed) {
        throw Error(ErrorCode::io, "cannot read " + path + ": read error");
    }
    return bytes;
}

void write_atomically(const std::string &path, const std::function<void(std::FILE *)> &write) {
    const std::filesystem::path target(path);
    const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    std::string tmp = (dir / ("." + target.filename().string() + ".halconv-XXXXXX")).string();
    const int fd = mkstemp(tmp.data());
    if (fd < 0) {
        throw Error(ErrorCode::io, "cannot write " + path + ": " + std::strerror(errno));
    }
    std::FILE *file = fdopen(fd, "wb");
    if (file == nullptr) {
        const int e = errno;
        close(fd);
        unlink(tmp.c_str());
        throw Error(ErrorCode::io, "cannot write " + path + ": " + std::strerror(e));
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
        const int e = errno;
        unlink(tmp.c_str());
        throw Error(ErrorCode::io, "cannot write " + path + ": " + std::strerror(e));
    }
    // mkstemp creates 0600; outputs get the usual permissions (umask applies).
    const mode_t mask = umask(0);
    umask(mask);
    chmod(tmp.c_str(), 0666 & ~mask);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        unlink(tmp.c_str());
        throw Error(ErrorCode::io, "cannot write " + path + ": " + std::strerror(e));
    }
}

}  // namespace halconv::io
