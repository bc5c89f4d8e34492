// (no upstream counterpart) The layering rules of the tree (docs/conventions.md, Layers): which
// folder may include which. The build enforces them for what it compiles (each target sees only
// the include roots of what it links, cmake/include_roots.cmake); this checker reads every source
// and header, so it also catches relative paths ("../mock_hw/gpu.h"), headers no target compiles
// yet, and a target that was given a root it should not have.
#pragma once
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace upanthor::layout {

// The folder (layer) a repository path belongs to: "panthor", "uapi", "drm", ... or "" when
// it is none of the project's folders.
std::string layer_of(std::string_view repo_path);

// Whether code in layer `from` may include a header of layer `to`.
bool may_include(std::string_view from, std::string_view to);

// The repository path an include directive names, as the compiler would find it: `spelled` as
// written between the quotes or angle brackets, `from_file` the including file's repository path.
// Paths that name no project folder (system headers) give nullopt.
std::optional<std::string> resolve_include(std::string_view from_file, std::string_view spelled);

struct Violation {
    std::string file;  // repository path
    int line;
    std::string include;  // as written
    std::string from_layer, to_layer;
};

// Checks one file's text.
std::vector<Violation> check_file(std::string_view repo_path, std::string_view text);
// Checks every C/C++ source and header of the tree under `root` (the build folders, .git and the
// fuzz corpora skipped).
std::vector<Violation> check_tree(const std::filesystem::path& root);

std::string to_string(const Violation& v);

}  // namespace upanthor::layout
