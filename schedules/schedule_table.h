// Named schedules: each generator's schedules/*.cpp keeps a table from the name the
// registry (variants.cmake) gives to the function that schedules its stages, so a new
// schedule is one function and one table line.
#pragma once

#include <map>
#include <stdexcept>
#include <string>

namespace halconv::sched {

template <typename Stages>
using ScheduleTable = std::map<std::string, void (*)(Stages &)>;

// Runs the schedule `name` of `table` on `stages`; an unknown name is a build error that
// lists the known ones.
template <typename Stages>
void apply_schedule(const ScheduleTable<Stages> &table, const std::string &name, Stages &stages,
                    const char *generator) {
    const auto it = table.find(name);
    if (it == table.end()) {
        std::string known;
        for (const auto &[n, fn] : table) {
            known += (known.empty() ? "" : ", ") + n;
        }
        throw std::invalid_argument(std::string("halconv generator ") + generator + ": unknown schedule '" + name +
                                    "'; its schedules: " + known);
    }
    it->second(stages);
}

}  // namespace halconv::sched
