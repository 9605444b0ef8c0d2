// The generated table of variants and the lookups over it.
#include "registry.h"

#include <algorithm>

#include "halconv_registry.inc"
#include "internal.h"

namespace halconv::internal {

std::string VariantRow::refusal(const Request &r) const {
    const std::string who = std::string("algorithm ") + algorithm + " on device " + to_string(device);
    if (!supports(r.precision)) {
        return who + " has no variant for precision " + to_string(r.precision);
    }
    if ((modes >> static_cast<int>(r.mode) & 1u) == 0) {
        return who + " does not support mode " + to_string(r.mode);
    }
    if ((boundaries >> static_cast<int>(r.boundary) & 1u) == 0) {
        return who + " does not support boundary " + to_string(r.boundary);
    }
    for (Limit limit : limits) {
        if (limit == nullptr) {
            break;
        }
        if (std::string why = limit(r, *this); !why.empty()) {
            return why;
        }
    }
    return {};
}

std::span<const VariantRow> variant_rows() {
    return generated_rows;
}

const ApiInfo &api_info(Api api) {
    for (const ApiInfo &info : generated_apis) {
        if (info.api == api) {
            return info;
        }
    }
    // Every Api the code names is declared in variants.cmake (checked by the tests).
    static const ApiInfo none{api, "?", "", false, {}, {}};
    return none;
}

const char *algorithm_name(Api api, int value) {
    const ApiInfo &info = api_info(api);
    return value >= 0 && value < static_cast<int>(info.algorithms.size()) ? info.algorithms[size_t(value)] : "?";
}

std::optional<int> algorithm_value(Api api, std::string_view name) {
    const ApiInfo &info = api_info(api);
    for (size_t i = 0; i < info.algorithms.size(); i++) {
        if (name == info.algorithms[i]) {
            return static_cast<int>(i);
        }
    }
    return std::nullopt;
}

bool valid_algorithm(Api api, int value) {
    return value >= 0 && value < static_cast<int>(api_info(api).algorithms.size());
}

std::vector<const VariantRow *> rows_of(Api api, int value, Device device) {
    std::vector<const VariantRow *> rows;
    for (const VariantRow &row : generated_rows) {
        if (row.api == api && row.value == value && row.device == device) {
            rows.push_back(&row);
        }
    }
    return rows;
}

std::vector<int> algorithms_on(Api api, Device device) {
    std::vector<int> values;
    for (const VariantRow &row : generated_rows) {
        if (row.api == api && row.device == device &&
            (values.empty() || std::find(values.begin(), values.end(), row.value) == values.end())) {
            values.push_back(row.value);
        }
    }
    return values;
}

std::string algorithm_list(Api api, Device device) {
    std::string list;
    const ApiInfo &info = api_info(api);
    for (size_t v = info.has_automatic ? 1 : 0; v < info.algorithms.size(); v++) {
        bool present = device == Device::automatic;
        for (const VariantRow &row : generated_rows) {
            present = present || (row.api == api && row.value == static_cast<int>(v) && row.device == device);
        }
        if (present) {
            list += std::string(list.empty() ? "" : ", ") + info.algorithms[v];
        }
    }
    return list;
}

}  // namespace halconv::internal
