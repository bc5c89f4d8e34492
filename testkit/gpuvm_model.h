// The reference model of a VA space that the drm_gpuvm differential test (gpuvm_test.cpp) and
// the fuzz_gpuvm target (fuzz/gpuvm_program.cpp) check drm_gpuvm against: an interval map of
// page ranges to (BO, offset).
#pragma once
#include <iterator>
#include <map>

#include "kernel_shim/types.h"

namespace gpuvm_test {

struct ModelMapping {
    kshim::u64 end;
    int bo;
    kshim::u64 offset;
};
using Model = std::map<kshim::u64, ModelMapping>;  // start -> mapping

// Cuts [s, e) out of the model.
inline void model_carve(Model& model, kshim::u64 s, kshim::u64 e) {
    auto it = model.lower_bound(s);
    if (it != model.begin() && std::prev(it)->second.end > s)
        --it;
    while (it != model.end() && it->first < e) {
        kshim::u64 a = it->first;
        ModelMapping mm = it->second;
        it = model.erase(it);
        if (a < s)
            model[a] = {s, mm.bo, mm.offset};
        if (mm.end > e)
            model[e] = {mm.end, mm.bo, mm.offset + (e - a)};
    }
}

}  // namespace gpuvm_test
