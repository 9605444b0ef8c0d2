// Wisdom: reading and writing the measurement files, the devices they belong to, the
// built-in tables (data/wisdom/*.json, compiled in) and which table Auto uses.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "cost_model.h"
#include "internal.h"

namespace halconv {

namespace {

struct BuiltInTable {
    const char *file;
    const char *json;
};

#include "halconv_wisdom_tables.inc"

using nlohmann::json;

constexpr const char *format_name = "halconv-wisdom";
constexpr int format_version = 1;

Error bad_wisdom(const std::string &origin, const std::string &what) {
    return Error(ErrorCode::invalid_argument, origin + ": not a halconv wisdom file: " + what);
}

template <typename Enum>
Enum enum_named(const std::string &origin, const std::string &field, const std::string &value,
                std::initializer_list<Enum> values) {
    for (Enum v : values) {
        if (value == to_string(v)) {
            return v;
        }
    }
    throw bad_wisdom(origin, field + " '" + value + "' is unknown");
}

const json &member(const std::string &origin, const json &object, const char *name, json::value_t type) {
    const auto it = object.find(name);
    if (it == object.end() || it->type() != type) {
        throw bad_wisdom(origin, std::string("missing or mistyped field '") + name + "'");
    }
    return *it;
}

int positive_int(const std::string &origin, const json &v, const char *what) {
    if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > (1 << 30)) {
        throw bad_wisdom(origin, std::string(what) + " must be whole numbers from 1 to 2^30");
    }
    return int(v.get<int64_t>());
}

Wisdom::Section parse_section(const std::string &origin, const json &s) {
    if (!s.is_object()) {
        throw bad_wisdom(origin, "a section is not an object");
    }
    Wisdom::Section section;
    const json &d = member(origin, s, "device", json::value_t::object);
    section.device.kind =
        enum_named(origin, "device kind", member(origin, d, "kind", json::value_t::string).get<std::string>(),
                   {Device::cpu, Device::cuda});
    section.device.name = member(origin, d, "name", json::value_t::string).get<std::string>();
    section.device.detail = member(origin, d, "detail", json::value_t::string).get<std::string>();
    for (const json &m : member(origin, s, "measurements", json::value_t::array)) {
        if (!m.is_object()) {
            throw bad_wisdom(origin, "a measurement is not an object");
        }
        Measurement r;
        const std::string algorithm = member(origin, m, "algorithm", json::value_t::string).get<std::string>();
        r.precision =
            enum_named(origin, "precision", member(origin, m, "precision", json::value_t::string).get<std::string>(),
                       {Precision::f64, Precision::f32, Precision::f16, Precision::f16f32});
        r.mode = enum_named(origin, "mode", member(origin, m, "mode", json::value_t::string).get<std::string>(),
                            {Mode::valid, Mode::same, Mode::full});
        const json &image = member(origin, m, "image", json::value_t::array);
        const json &kernel = member(origin, m, "kernel", json::value_t::array);
        if (image.size() != 2 || kernel.size() != 2) {
            throw bad_wisdom(origin, "image and kernel must be [width, height]");
        }
        r.image_width = positive_int(origin, image[0], "image extents");
        r.image_height = positive_int(origin, image[1], "image extents");
        r.kernel_width = positive_int(origin, kernel[0], "kernel extents");
        r.kernel_height = positive_int(origin, kernel[1], "kernel extents");
        const auto ms = m.find("ms");
        if (ms == m.end() || !ms->is_number() || !std::isfinite(ms->get<double>()) || ms->get<double>() <= 0) {
            throw bad_wisdom(origin, "ms must be a finite number > 0");
        }
        r.ms = ms->get<double>();
        if (m.contains("rank")) {
            r.kernel_rank = positive_int(origin, m["rank"], "rank");
        }
        // Another build may name algorithms this one lacks: such a file is refused by its
        // build id, so the names are dropped rather than failing the parse.
        if (const std::optional<Algorithm> a = algorithm_named(algorithm); a && *a != Algorithm::automatic) {
            r.algorithm = *a;
            section.measurements.push_back(r);
        }
    }
    return section;
}

// ---- Warnings ----
std::mutex warning_mutex;
WarningHandler warning_handler = [](const std::string &message) {
    std::fprintf(stderr, "halconv: warning: %s\n", message.c_str());
};
std::set<std::string> warned;

void warn_once(const std::string &message) {
    WarningHandler handler;
    {
        std::lock_guard<std::mutex> lock(warning_mutex);
        if (!warned.insert(message).second) {
            return;
        }
        handler = warning_handler;
    }
    if (handler) {
        handler(message);
    }
}

// ---- Which wisdom plans read ----
struct Loaded {
    bool done = false;
    std::optional<Wisdom> wisdom;  // none: no file, or an unreadable one
    std::string origin;            // "wisdom file PATH", or "wisdom given to use_wisdom"
};
std::mutex state_mutex;
Loaded loaded;
std::map<std::string, std::shared_ptr<const CostTable>> tables;

std::string key_of(const DeviceIdentity &d) {
    return std::string(to_string(d.kind)) + "|" + d.name + "|" + d.detail;
}

const std::vector<std::pair<std::string, Wisdom>> &built_in() {
    static const std::vector<std::pair<std::string, Wisdom>> parsed = [] {
        std::vector<std::pair<std::string, Wisdom>> out;
        for (const BuiltInTable &t : built_in_tables) {
            out.push_back({t.file, parse_wisdom(t.json, t.file)});
        }
        return out;
    }();
    return parsed;
}

// Under state_mutex.
void load_once() {
    if (loaded.done) {
        return;
    }
    loaded.done = true;
    const std::string path = default_wisdom_path();
    loaded.origin = "wisdom file " + path;
    std::error_code ec;
    if (path.empty() || !std::filesystem::exists(path, ec)) {
        return;  // no file: the built-in tables, silently
    }
    try {
        loaded.wisdom = read_wisdom(path);
    } catch (const Error &e) {
        // The message names the file already.
        const std::string what = e.what();
        warn_once("ignoring " + what.substr(what.rfind("halconv: ", 0) == 0 ? 9 : 0));
    }
}

std::shared_ptr<const CostTable> build_table(const DeviceIdentity &device) {
    auto table = std::make_shared<CostTable>();
    if (loaded.wisdom) {
        const Wisdom &w = *loaded.wisdom;
        const std::string ours = build_info().build_id;
        if (w.build_id != ours) {
            warn_once("ignoring " + loaded.origin + ": made by another build of halconv (build " + w.build_id +
                      ", this is " + ours + "); run halconv tune again");
        } else {
            std::string others;
            for (const Wisdom::Section &s : w.sections) {
                if (s.device == device) {
                    table->source = loaded.origin + " (" + w.created + ")";
                    table->measured_on = s.device;
                    table->measurements = s.measurements;
                    return table;
                }
                others += (others.empty() ? "" : "; ") + describe(s.device);
            }
            warn_once("ignoring " + loaded.origin + " for " + describe(device) +
                      ": it has measurements of other devices only (" + others + "); halconv tune measures this one");
        }
    }
    // A built-in table of this very device, else the first of its kind.
    for (bool exact : {true, false}) {
        for (const auto &[file, w] : built_in()) {
            for (const Wisdom::Section &s : w.sections) {
                if ((exact && s.device == device) || (!exact && s.device.kind == device.kind)) {
                    table->source = "built-in table " + file +
                                    (exact ? "" : " (measured on " + describe(s.device) + "; this device is untuned)");
                    table->measured_on = s.device;
                    table->measurements = s.measurements;
                    return table;
                }
            }
        }
    }
    table->source = "no table";
    table->measured_on = device;
    return table;
}

std::string cpu_model_name() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);) {
        if (line.rfind("model name", 0) == 0) {
            const size_t colon = line.find(':');
            if (colon != std::string::npos) {
                return line.substr(line.find_first_not_of(" \t", colon + 1));
            }
        }
    }
    return "unknown CPU";
}

}  // namespace

const char *to_string(ErrorCode code) {
    switch (code) {
        case ErrorCode::invalid_argument:
            return "invalid_argument";
        case ErrorCode::unsupported:
            return "unsupported";
        case ErrorCode::device:
            return "device";
        case ErrorCode::out_of_memory:
            return "out_of_memory";
        case ErrorCode::io:
            return "io";
        case ErrorCode::internal:
            return "internal";
    }
    return "?";
}

DeviceIdentity identify_device(Device kind) {
    DeviceIdentity id;
    if (kind == Device::cuda) {
        // Asked on every automatic plan: each device's properties are read once.
        static std::mutex mutex;
        static std::map<int, DeviceIdentity> known;
        const int ordinal = internal::current_cuda_device();
        std::lock_guard<std::mutex> lock(mutex);
        if (const auto it = known.find(ordinal); it != known.end()) {
            return it->second;
        }
        const std::vector<CudaDevice> devices = internal::cuda_devices();
        const auto device =
            std::find_if(devices.begin(), devices.end(), [&](const CudaDevice &d) { return d.ordinal == ordinal; });
        if (ordinal < 0 || device == devices.end()) {
            throw Error(ErrorCode::device, "no usable CUDA device to identify");
        }
        id.kind = Device::cuda;
        id.name = device->name;
        id.detail = "sm_" + std::to_string(device->compute_capability_major) +
                    std::to_string(device->compute_capability_minor) + ", " + std::to_string(device->multiprocessors) +
                    " SMs";
        known[ordinal] = id;
        return id;
    }
    static const std::string name = cpu_model_name();
    id.kind = Device::cpu;
    id.name = name;
    id.detail = std::to_string(std::max(1u, std::thread::hardware_concurrency())) + " threads";
    return id;
}

std::string describe(const DeviceIdentity &d) {
    return d.name + " (" + to_string(d.kind) + ", " + d.detail + ")";
}

Wisdom parse_wisdom(const std::string &text, const std::string &origin) {
    json doc;
    try {
        doc = json::parse(text);
    } catch (const json::exception &e) {
        throw Error(ErrorCode::io, origin + ": unreadable wisdom (" + e.what() + ")");
    }
    if (!doc.is_object()) {
        throw bad_wisdom(origin, "the top level is not an object");
    }
    if (member(origin, doc, "format", json::value_t::string).get<std::string>() != format_name) {
        throw bad_wisdom(origin, std::string("format is not '") + format_name + "'");
    }
    const auto version = doc.find("version");
    if (version == doc.end() || !version->is_number_integer() || version->get<int>() != format_version) {
        throw bad_wisdom(origin, "version is not " + std::to_string(format_version));
    }
    Wisdom w;
    w.build_id = member(origin, doc, "build_id", json::value_t::string).get<std::string>();
    w.created = member(origin, doc, "created", json::value_t::string).get<std::string>();
    w.command = member(origin, doc, "command", json::value_t::string).get<std::string>();
    for (const json &s : member(origin, doc, "sections", json::value_t::array)) {
        w.sections.push_back(parse_section(origin, s));
    }
    return w;
}

std::string format_wisdom(const Wisdom &w) {
    // One measurement per line: diffable, and still one JSON document.
    std::ostringstream out;
    out << "{\n  \"format\": " << json(format_name).dump() << ",\n  \"version\": " << format_version
        << ",\n  \"build_id\": " << json(w.build_id).dump() << ",\n  \"created\": " << json(w.created).dump()
        << ",\n  \"command\": " << json(w.command).dump() << ",\n  \"sections\": [";
    for (size_t i = 0; i < w.sections.size(); i++) {
        const Wisdom::Section &s = w.sections[i];
        const json device = {{"kind", to_string(s.device.kind)}, {"name", s.device.name}, {"detail", s.device.detail}};
        out << (i ? "," : "") << "\n    {\"device\": " << device.dump() << ",\n     \"measurements\": [";
        for (size_t j = 0; j < s.measurements.size(); j++) {
            const Measurement &m = s.measurements[j];
            json row = {{"algorithm", to_string(m.algorithm)},
                        {"precision", to_string(m.precision)},
                        {"mode", to_string(m.mode)},
                        {"image", {m.image_width, m.image_height}},
                        {"kernel", {m.kernel_width, m.kernel_height}},
                        {"ms", m.ms}};
            if (m.kernel_rank != 1) {
                row["rank"] = m.kernel_rank;
            }
            out << (j ? "," : "") << "\n      " << row.dump();
        }
        out << "]}";
    }
    out << "\n  ]\n}\n";
    return out.str();
}

Wisdom read_wisdom(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::error_code ec;
    if (!in || std::filesystem::is_directory(path, ec)) {
        throw Error(ErrorCode::io, path + ": cannot read the wisdom file");
    }
    std::ostringstream text;
    text << in.rdbuf();
    return parse_wisdom(text.str(), path);
}

void write_wisdom(const std::string &path, const Wisdom &wisdom) {
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path target(path);
    if (target.has_parent_path()) {
        fs::create_directories(target.parent_path(), ec);
    }
    const std::string temporary = path + ".tmp-" + std::to_string(::getpid());
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        out << format_wisdom(wisdom);
        out.flush();
        if (!out) {
            fs::remove(temporary, ec);
            throw Error(ErrorCode::io, path + ": cannot write the wisdom file");
        }
    }
    fs::rename(temporary, target, ec);
    if (ec) {
        fs::remove(temporary, ec);
        throw Error(ErrorCode::io, path + ": cannot write the wisdom file (" + ec.message() + ")");
    }
}

std::string default_wisdom_path() {
    if (const char *p = std::getenv("HALCONV_WISDOM"); p != nullptr && *p != '\0') {
        return p;
    }
    if (const char *p = std::getenv("XDG_CACHE_HOME"); p != nullptr && *p != '\0') {
        return std::string(p) + "/halconv/wisdom.json";
    }
    if (const char *p = std::getenv("HOME"); p != nullptr && *p != '\0') {
        return std::string(p) + "/.cache/halconv/wisdom.json";
    }
    return {};
}

CostTable cost_table(const DeviceIdentity &device) {
    return *internal::cached_cost_table(device);
}

void use_wisdom(const Wisdom &wisdom) {
    std::lock_guard<std::mutex> lock(state_mutex);
    loaded.done = true;
    loaded.wisdom = wisdom;
    loaded.origin = "wisdom given to use_wisdom";
    tables.clear();
}

void reload_wisdom() {
    std::lock_guard<std::mutex> lock(state_mutex);
    loaded = Loaded{};
    tables.clear();
}

WarningHandler set_warning_handler(WarningHandler handler) {
    std::lock_guard<std::mutex> lock(warning_mutex);
    WarningHandler previous = std::move(warning_handler);
    warning_handler = std::move(handler);
    warned.clear();
    return previous;
}

Wisdom merge_wisdom(const Wisdom &into, const Wisdom &update) {
    if (into.build_id != update.build_id) {
        return update;
    }
    Wisdom merged = update;
    for (const Wisdom::Section &s : into.sections) {
        bool replaced = false;
        for (const Wisdom::Section &u : update.sections) {
            replaced = replaced || u.device == s.device;
        }
        if (!replaced) {
            merged.sections.push_back(s);
        }
    }
    return merged;
}

}  // namespace halconv

namespace halconv::internal {

std::shared_ptr<const CostTable> cached_cost_table(const DeviceIdentity &device) {
    std::lock_guard<std::mutex> lock(state_mutex);
    load_once();
    auto &slot = tables[key_of(device)];
    if (!slot) {
        slot = build_table(device);
    }
    return slot;
}

}  // namespace halconv::internal
