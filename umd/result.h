// Error values for the userspace side: a call returns a Status (ok or a negative errno) or a
// Result<T> (a value or a negative errno), the way pan_kmod returns -errno from its ioctl
// wrappers. No exceptions: reading the value of a failed Result is a programming error and aborts.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <utility>

namespace umd {

// A negative errno on its way into a Status or a Result.
struct Err {
    int value;
};
// err(-EINVAL); a non-negative value is a caller bug and becomes -EIO rather than "success".
constexpr Err err(int e) {
    return Err{e < 0 ? e : -5 /* EIO */};
}

class [[nodiscard]] Status {
public:
    Status() = default;
    Status(Err e) : err_(e.value) {}  // NOLINT: implicit, so `return err(-EINVAL);` reads naturally
    // 0 -> ok; negative -> that errno (what an ioctl wrapper returns).
    static Status from_ret(int ret) { return ret < 0 ? Status(Err{ret}) : Status(); }

    bool ok() const { return err_ == 0; }
    explicit operator bool() const { return ok(); }
    // 0 or the negative errno.
    int error() const { return err_; }

private:
    int err_ = 0;
};

template <class T>
class [[nodiscard]] Result {
public:
    Result(const T& v) : value_(v) {}        // NOLINT: implicit
    Result(T&& v) : value_(std::move(v)) {}  // NOLINT: implicit
    Result(Err e) : err_(e.value) {}         // NOLINT: implicit
    // Propagates a failed Status (an ok Status has no value to give: -EIO).
    Result(Status s) : err_(s.ok() ? -5 : s.error()) {}  // NOLINT: implicit

    bool ok() const { return err_ == 0; }
    explicit operator bool() const { return ok(); }
    int error() const { return err_; }
    Status status() const { return ok() ? Status() : Status(Err{err_}); }

    T& value() & {
        check();
        return *value_;
    }
    const T& value() const& {
        check();
        return *value_;
    }
    T&& value() && {
        check();
        return std::move(*value_);
    }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }
    T&& operator*() && { return std::move(*this).value(); }
    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T value_or(T fallback) const { return ok() ? *value_ : fallback; }

private:
    void check() const {
        if (!ok()) {
            std::fprintf(stderr, "umd::Result: value() of an error (%d)\n", err_);
            std::abort();
        }
    }

    std::optional<T> value_;
    int err_ = 0;
};

}  // namespace umd
