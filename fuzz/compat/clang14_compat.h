// (no upstream counterpart) Forced into every translation unit of the fuzz preset
// (-include, see CMakePresets.json) to build the tree with clang 14 against libstdc++ 12.
// libstdc++ 12 only defines std::source_location when the compiler has
// __builtin_source_location, which clang gained in 15; clang 14 has the older per-field
// builtins, which give the same answers when used as default arguments.
#pragma once
#ifdef __cplusplus
#include <source_location>

#if !defined(__cpp_lib_source_location) && defined(__clang__)
namespace std {
struct source_location {
    static constexpr source_location current(const char* file = __builtin_FILE(),
                                             const char* function = __builtin_FUNCTION(),
                                             unsigned line = __builtin_LINE(),
                                             unsigned column = __builtin_COLUMN()) noexcept {
        source_location l;
        l.file_ = file;
        l.function_ = function;
        l.line_ = line;
        l.column_ = column;
        return l;
    }
    constexpr source_location() noexcept = default;
    constexpr unsigned line() const noexcept { return line_; }
    constexpr unsigned column() const noexcept { return column_; }
    constexpr const char* file_name() const noexcept { return file_; }
    constexpr const char* function_name() const noexcept { return function_; }

private:
    const char* file_ = "";
    const char* function_ = "";
    unsigned line_ = 0;
    unsigned column_ = 0;
};
}  // namespace std
#endif
#endif
