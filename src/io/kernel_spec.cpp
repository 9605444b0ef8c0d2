#include "kernel_spec.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <map>
#include <numbers>
#include <random>
#include <sstream>

#include "halconv/error.h"
#include "image_io.h"

namespace halconv::io {
namespace {

const char *const allowed_specs =
    "allowed: gaussian:sigma=S[,size=K], box:K, laplacian, sobel-x, sobel-y, log:sigma=S[,size=K], "
    "random:K[,seed=N], or a .txt or .fits file";

bool ends_with(const std::string &s, const std::string &suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// The whole string as a finite number (false when anything else is in it, or when it is
// beyond a double's range; one below the smallest normal double rounds, as it must).
bool parse_double(const std::string &text, double &value) {
    if (text.empty()) {
        return false;
    }
    char *end = nullptr;
    value = std::strtod(text.c_str(), &end);
    return end == text.c_str() + text.size() && std::isfinite(value);
}

bool parse_int(const std::string &text, long long &value) {
    if (text.empty()) {
        return false;
    }
    errno = 0;
    char *end = nullptr;
    value = std::strtoll(text.c_str(), &end, 10);
    return errno == 0 && end == text.c_str() + text.size();
}

struct Parameters {
    std::string name;
    std::string positional;                    // box:K, random:K
    std::map<std::string, std::string> named;  // key=value
};

Parameters split(const std::string &spec) {
    Parameters p;
    const size_t colon = spec.find(':');
    p.name = spec.substr(0, colon);
    if (colon == std::string::npos) {
        return p;
    }
    std::stringstream rest(spec.substr(colon + 1));
    std::string item;
    bool first = true;
    while (std::getline(rest, item, ',')) {
        const size_t eq = item.find('=');
        if (eq == std::string::npos) {
            if (!first || item.empty()) {
                throw Error(ErrorCode::invalid_argument, "kernel '" + spec + "': '" + item + "' is not key=value");
            }
            p.positional = item;
        } else if (!p.named.emplace(item.substr(0, eq), item.substr(eq + 1)).second) {
            throw Error(ErrorCode::invalid_argument, "kernel '" + spec + "': " + item.substr(0, eq) + " given twice");
        }
        first = false;
    }
    return p;
}

void expect_keys(const std::string &spec, const Parameters &p, std::initializer_list<const char *> keys,
                 bool positional) {
    if (!positional && !p.positional.empty()) {
        throw Error(ErrorCode::invalid_argument, "kernel '" + spec + "': unexpected '" + p.positional + "'");
    }
    for (const auto &[key, value] : p.named) {
        bool known = false;
        for (const char *k : keys) {
            known |= key == k;
        }
        if (!known) {
            std::string list;
            for (const char *k : keys) {
                list += std::string(list.empty() ? "" : ", ") + k;
            }
            throw Error(ErrorCode::invalid_argument,
                        "kernel '" + spec + "': unknown parameter '" + key + "'" +
                            (list.empty() ? std::string("; it takes none") : "; allowed " + list));
        }
    }
}

int edge_parameter(const std::string &spec, const std::string &what, const std::string &text) {
    long long k = 0;
    if (!parse_int(text, k) || k < 1 || k > max_spec_kernel_edge) {
        throw Error(ErrorCode::invalid_argument, "kernel '" + spec + "': " + what + " '" + text +
                                                     "'; allowed an integer 1 .. " +
                                                     std::to_string(max_spec_kernel_edge));
    }
    return int(k);
}

double sigma_parameter(const std::string &spec, const Parameters &p) {
    const auto it = p.named.find("sigma");
    double sigma = 0;
    if (it == p.named.end()) {
        throw Error(ErrorCode::invalid_argument,
                    "kernel '" + spec + "': sigma is required (e.g. " + p.name + ":sigma=2)");
    }
    // The LoG's scale 1 / (pi sigma^4) overflows a double below sigma = 1e-75 or so.
    const bool log = p.name == "log";
    const double smallest = log ? 1e-75 : 0.0;
    if (!parse_double(it->second, sigma) || !(log ? sigma >= smallest : sigma > 0) || sigma > 100) {
        throw Error(ErrorCode::invalid_argument, "kernel '" + spec + "': sigma '" + it->second +
                                                     "'; allowed a number in " + (log ? "[1e-75, 100]" : "(0, 100]"));
    }
    return sigma;
}

int size_parameter(const std::string &spec, const Parameters &p, int default_size) {
    const auto it = p.named.find("size");
    return it == p.named.end() ? default_size : edge_parameter(spec, "size", it->second);
}

KernelTaps square(int k) {
    KernelTaps t;
    t.width = t.height = k;
    t.taps.assign(size_t(k) * k, 0.0);
    return t;
}

KernelTaps fixed3(const double (&v)[9]) {
    KernelTaps t = square(3);
    t.taps.assign(std::begin(v), std::end(v));
    return t;
}

// Taps f(dx, dy) about the kernel's centre ((K - 1) / 2, exact also for even K).
template <typename F>
KernelTaps centred(int k, F &&f) {
    KernelTaps t = square(k);
    const double c = (k - 1) / 2.0;
    for (int y = 0; y < k; y++) {
        for (int x = 0; x < k; x++) {
            t.taps[size_t(y) * k + x] = f(x - c, y - c);
        }
    }
    return t;
}

KernelTaps read_kernel_file(const std::string &path) {
    if (ends_with(path, ".fits") || ends_with(path, ".fit")) {
        ReadLimits limits;
        limits.max_edge = max_spec_kernel_edge;
        const FitsImage img = read_fits(path, limits);
        for (double v : img.data) {
            if (!std::isfinite(v)) {
                throw Error(ErrorCode::io,
                            "kernel file " + path + ": holds a NaN or infinite tap; kernels must be finite");
            }
        }
        return {img.width, img.height, img.data};
    }
    const std::vector<char> bytes = read_file(path, max_kernel_text_bytes);
    return parse_kernel_text(path, std::string(bytes.begin(), bytes.end()));
}

}  // namespace

KernelTaps parse_kernel_text(const std::string &name, const std::string &text) {
    KernelTaps t;
    std::stringstream lines(text);
    std::string line;
    int line_number = 0;
    while (std::getline(lines, line)) {
        line_number++;
        for (char &ch : line) {
            if (ch == ',' || ch == '\r' || ch == '\t') {
                ch = ' ';
            }
        }
        std::stringstream fields(line);
        std::string field;
        int count = 0;
        while (fields >> field) {
            double v = 0;
            if (!parse_double(field, v)) {
                throw Error(ErrorCode::io, "kernel file " + name + ", line " + std::to_string(line_number) + ": '" +
                                               field + "' is not a finite number");
            }
            t.taps.push_back(v);
            count++;
        }
        if (count == 0) {
            continue;  // blank lines are allowed anywhere
        }
        if (t.height > 0 && count != t.width) {
            throw Error(ErrorCode::io, "kernel file " + name + ", line " + std::to_string(line_number) + ": " +
                                           std::to_string(count) + " numbers, the rows above have " +
                                           std::to_string(t.width) + "; every row must have the same count");
        }
        t.width = count;
        t.height++;
        if (t.width > max_spec_kernel_edge || t.height > max_spec_kernel_edge) {
            throw Error(ErrorCode::io,
                        "kernel file " + name + ": larger than " + std::to_string(max_spec_kernel_edge) + " per axis");
        }
    }
    if (t.height == 0) {
        throw Error(ErrorCode::io, "kernel file " + name + ": no numbers; expected rows of numbers, one row per line");
    }
    return t;
}

KernelTaps parse_kernel_spec(const std::string &spec) {
    if (ends_with(spec, ".txt") || ends_with(spec, ".fits") || ends_with(spec, ".fit") ||
        spec.find('/') != std::string::npos) {
        return read_kernel_file(spec);
    }
    const Parameters p = split(spec);
    if (p.name == "gaussian" || p.name == "log") {
        expect_keys(spec, p, {"sigma", "size"}, false);
        const double s = sigma_parameter(spec, p);
        const bool log = p.name == "log";
        const int k = size_parameter(spec, p, 2 * int(std::ceil((log ? 4 : 3) * s)) + 1);
        // In units of sigma first, so that a tiny sigma gives the limit (a unit impulse)
        // instead of 0 / 0: the squares of dx and s underflow, the ratio does not.
        KernelTaps t = centred(k, [&](double dx, double dy) {
            const double u = dx / s, v = dy / s;
            const double r2 = (u * u + v * v) / 2;
            return log ? -(1 - r2) * std::exp(-r2) / (std::numbers::pi * s * s * s * s) : std::exp(-r2);
        });
        double sum = 0;
        for (double v : t.taps) {
            sum += v;
        }
        for (double &v : t.taps) {
            v = log ? v - sum / double(t.taps.size()) : v / sum;  // LoG: zero response to flat areas
        }
        return t;
    }
    if (p.name == "box") {
        expect_keys(spec, p, {}, true);
        const int k = edge_parameter(spec, "size", p.positional);
        KernelTaps t = square(k);
        t.taps.assign(t.taps.size(), 1.0 / (double(k) * k));
        return t;
    }
    if (p.name == "random") {
        expect_keys(spec, p, {"seed"}, true);
        const int k = edge_parameter(spec, "size", p.positional);
        long long seed = 1;
        if (const auto it = p.named.find("seed"); it != p.named.end() && (!parse_int(it->second, seed) || seed < 0)) {
            throw Error(ErrorCode::invalid_argument,
                        "kernel '" + spec + "': seed '" + it->second + "'; allowed a non-negative integer");
        }
        std::mt19937_64 engine(static_cast<uint64_t>(seed));
        std::uniform_real_distribution<double> u(0.0, 1.0);
        KernelTaps t = square(k);
        for (double &v : t.taps) {
            v = u(engine);
        }
        return t;
    }
    if (p.name == "laplacian" || p.name == "sobel-x" || p.name == "sobel-y") {
        expect_keys(spec, p, {}, false);
        if (p.name == "laplacian") {
            return fixed3({0, 1, 0, 1, -4, 1, 0, 1, 0});
        }
        return p.name == "sobel-x" ? fixed3({-1, 0, 1, -2, 0, 2, -1, 0, 1}) : fixed3({-1, -2, -1, 0, 0, 0, 1, 2, 1});
    }
    throw Error(ErrorCode::invalid_argument, "unknown kernel '" + spec + "'; " + allowed_specs);
}

}  // namespace halconv::io
