// The parameter grid of a recovery fault campaign (panthor's and panfrost's): every fault class x
// every trigger x seeds 1..N, with N from UPANTHOR_CAMPAIGN_SEEDS (a wider sweep) or the
// campaign's own default for CI.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <tuple>
#include <vector>

namespace upanthor::testkit {

inline std::uint64_t campaign_seeds_per_cell(std::uint64_t ci_default) {
    const char* s = std::getenv("UPANTHOR_CAMPAIGN_SEEDS");
    const std::uint64_t n = s ? std::strtoull(s, nullptr, 10) : 0;
    return n ? n : ci_default;
}

template <typename Class, typename Trigger, std::size_t NC, std::size_t NT>
std::vector<std::tuple<Class, Trigger, std::uint64_t>> campaign_params(const Class (&classes)[NC],
                                                                       const Trigger (&triggers)[NT],
                                                                       std::uint64_t seeds) {
    std::vector<std::tuple<Class, Trigger, std::uint64_t>> v;
    for (Class c : classes)
        for (Trigger t : triggers)
            for (std::uint64_t s = 1; s <= seeds; s++)
                v.emplace_back(c, t, s);
    return v;
}

}  // namespace upanthor::testkit
