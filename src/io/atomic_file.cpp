// Output files appear whole or not at all: written under a temporary name in the target
// directory (same file system, so the rename is atomic), then renamed.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "halconv/error.h"
#include "image_io.h"

namespace halconv::io {

void write_atomically(const std::string &path, const std::function<void(std::FILE *)> &write) {
    const std::filesystem::path target(path);
    const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : std::filesystem::path(".");
    std::string tmp = (dir / ("." + target.filename().string() + ".halconv-XXXXXX")).string();
    const int fd = mkstemp(tmp.data());
    if (fd < 0) {
        throw Error("cannot write " + path + ": " + std::strerror(errno));
    }
    std::FILE *file = fdopen(fd, "wb");
    if (file == nullptr) {
        const int e = errno;
        close(fd);
        unlink(tmp.c_str());
        throw Error("cannot write " + path + ": " + std::strerror(e));
    }
    try {
        write(file);
        if (std::fflush(file) != 0 || std::ferror(file) != 0) {
            throw Error("cannot write " + path + ": " + std::strerror(errno));
        }
    } catch (...) {
        std::fclose(file);
        unlink(tmp.c_str());
        throw;
    }
    if (std::fclose(file) != 0) {
        const int e = errno;
        unlink(tmp.c_str());
        throw Error("cannot write " + path + ": " + std::strerror(e));
    }
    // mkstemp creates 0600; outputs get the usual permissions (umask applies).
    const mode_t mask = umask(0);
    umask(mask);
    chmod(tmp.c_str(), 0666 & ~mask);
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const int e = errno;
        unlink(tmp.c_str());
        throw Error("cannot write " + path + ": " + std::strerror(e));
    }
}

}  // namespace halconv::io
