// Mirrors include/linux/xarray.h (the allocating subset) and idr.h: ids mapped to pointers.
#pragma once
#include <algorithm>
#include <climits>
#include <map>
#include <mutex>

#include "kernel_shim/fault_inject.h"
#include "kernel_shim/gfp.h"

namespace kshim {

struct XaLimit {
    u32 min;
    u32 max;
};
#define XA_LIMIT(lo, hi) (::kshim::XaLimit{(lo), (hi)})
inline constexpr XaLimit xa_limit_32b{0, UINT_MAX};
inline constexpr XaLimit xa_limit_31b{0, INT_MAX};
inline constexpr unsigned XA_FLAGS_ALLOC = 1u << 0;
inline constexpr unsigned XA_FLAGS_ALLOC1 = 1u << 1;  // ids start at 1

template <class T>
class XArray {
public:
    explicit XArray(unsigned flags = XA_FLAGS_ALLOC) : flags_(flags) {}

    // Stores entry at the lowest free id in [limit.min, limit.max]: 0, -EBUSY when the range is
    // full, -ENOMEM on allocation failure, -EINVAL for a null entry.
    int alloc(u32* id, T* entry, XaLimit limit, gfp_t gfp) {
        if (!entry)
            return -EINVAL;
        might_alloc(gfp);
        if (should_fail_alloc("xarray", gfp))
            return -ENOMEM;
        std::lock_guard g(lock_);
        const u64 candidate = first_free(lowest(limit.min));
        if (candidate > limit.max)
            return -EBUSY;
        *id = static_cast<u32>(candidate);
        map_[*id] = entry;
        mark_used(*id);
        return 0;
    }
    // Like alloc, searching from *next and wrapping once; returns 1 if it wrapped, 0 if not.
    int alloc_cyclic(u32* id, T* entry, XaLimit limit, u32* next, gfp_t gfp) {
        u64 start = std::max<u64>(limit.min, *next);
        int ret = start > limit.max ? -EBUSY : alloc(id, entry, XaLimit{static_cast<u32>(start), limit.max}, gfp);
        int wrapped = 0;
        if (ret == -EBUSY && start > limit.min) {
            ret = alloc(id, entry, XaLimit{limit.min, static_cast<u32>(std::min<u64>(start - 1, limit.max))}, gfp);
            wrapped = 1;
        }
        if (ret)
            return ret;
        *next = *id + 1;
        return wrapped;
    }
    T* load(u32 id) const {
        std::lock_guard g(lock_);
        auto it = map_.find(id);
        return it == map_.end() ? nullptr : it->second;
    }
    // Returns the old entry; storing nullptr erases.
    T* store(u32 id, T* entry) {
        std::lock_guard g(lock_);
        auto it = map_.find(id);
        T* old = it == map_.end() ? nullptr : it->second;
        if (entry) {
            map_[id] = entry;
            if (!old)
                mark_used(id);
        } else if (it != map_.end()) {
            map_.erase(it);
            mark_free(id);
        }
        return old;
    }
    T* erase(u32 id) { return store(id, nullptr); }
    // fn(entry or nullptr) under the xa_lock, e.g. to take a reference before an erase can drop
    // the array's; returns what fn returns.
    template <class Fn>
    auto load_locked(u32 id, Fn&& fn) const {
        std::lock_guard g(lock_);
        auto it = map_.find(id);
        return fn(it == map_.end() ? nullptr : it->second);
    }
    // fn(id, entry) for each entry in id order, under the xa_lock (fn must not touch the array).
    template <class Fn>
    void for_each_locked(Fn&& fn) const {
        std::lock_guard g(lock_);
        for (auto& [id, e] : map_)
            fn(id, e);
    }
    bool empty() const {
        std::lock_guard g(lock_);
        return map_.empty();
    }
    size_t size() const {
        std::lock_guard g(lock_);
        return map_.size();
    }
    // Calls fn(id, entry) for each entry in id order (on a snapshot: fn may erase).
    template <class Fn>
    void for_each(Fn&& fn) const {
        std::map<u32, T*> snapshot;
        {
            std::lock_guard g(lock_);
            snapshot = map_;
        }
        for (auto& [id, e] : snapshot)
            fn(id, e);
    }

private:
    u64 lowest(u32 min) const { return (flags_ & XA_FLAGS_ALLOC1) && min == 0 ? 1 : min; }

    // The used ids as maximal runs [first, last], so that finding the lowest free id is one
    // lookup instead of a walk over every used id above the minimum (dense handle tables made
    // that walk quadratic).
    u64 first_free(u64 c) const {
        auto it = runs_.upper_bound(static_cast<u32>(std::min<u64>(c, UINT_MAX)));
        if (it == runs_.begin())
            return c;
        --it;
        return it->second >= c ? u64{it->second} + 1 : c;
    }
    void mark_used(u32 id) {
        u32 first = id, last = id;
        auto next = runs_.find(id + 1);
        if (id != UINT_MAX && next != runs_.end()) {
            last = next->second;
            runs_.erase(next);
        }
        auto it = runs_.lower_bound(id);
        if (it != runs_.begin() && std::prev(it)->second + 1 == id) {
            std::prev(it)->second = last;
            return;
        }
        runs_[first] = last;
    }
    void mark_free(u32 id) {
        auto it = std::prev(runs_.upper_bound(id));
        const u32 first = it->first, last = it->second;
        runs_.erase(it);
        if (first < id)
            runs_[first] = id - 1;
        if (id < last)
            runs_[id + 1] = last;
    }

    unsigned flags_;
    mutable std::mutex lock_;  // protects map_ (the xa_lock)
    std::map<u32, T*> map_;
    std::map<u32, u32> runs_;  // first used id of a run -> its last; runs neither touch nor overlap
};

// idr_alloc semantics on top: returns the id in [start, end) (end 0: no limit) or -ENOSPC.
template <class T>
int idr_alloc(XArray<T>* idr, T* ptr, int start, int end, gfp_t gfp) {
    u32 id;
    u32 max = end <= 0 ? INT_MAX : static_cast<u32>(end - 1);
    int ret = idr->alloc(&id, ptr, XaLimit{static_cast<u32>(start), max}, gfp);
    if (ret == -EBUSY)
        return -ENOSPC;
    return ret ? ret : static_cast<int>(id);
}

}  // namespace kshim
