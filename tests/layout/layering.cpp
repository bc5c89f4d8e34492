// (no upstream counterpart) The layering rules and the include scanner (layering.h).
#include "tests/layout/layering.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace upanthor::layout {
namespace {

// Layers, most specific first: a path belongs to the first folder that prefixes it.
const std::vector<std::string_view> kLayers = {"uapi",     "hw",      "kernel_shim", "drm",   "panthor",
                                               "panfrost", "mock_hw", "mock_jm",     "umd",   "host",
                                               "testkit",  "tools",   "fuzz",        "bench", "tests"};

// What each layer may include besides itself. The lowest layers first: the hardware contract
// and the uAPI depend on nothing of ours, the kernel services on the uAPI they implement; the DRM
// core on the kernel services; a
// driver on the DRM core and its hardware contract, never on a mock; a mock on the kernel
// services and the contract, never on a driver; userspace (umd) on the uAPI and the contract
// only. Above them the host boots drivers on mocks, and the programs sit on the host. Only tests
// may include tests.
const std::map<std::string_view, std::set<std::string_view>>& rules() {
    static const std::map<std::string_view, std::set<std::string_view>> r = [] {
        std::map<std::string_view, std::set<std::string_view>> m;
        m["hw"] = {};
        m["uapi"] = {};
        m["kernel_shim"] = {"uapi"};
        m["drm"] = {"uapi", "kernel_shim"};
        m["panthor"] = {"drm", "uapi", "kernel_shim", "hw"};
        m["panfrost"] = {"drm", "uapi", "kernel_shim", "hw"};
        m["mock_hw"] = {"kernel_shim", "hw"};
        // A second mock GPU builds on the first one's family-independent chassis.
        m["mock_jm"] = {"mock_hw", "kernel_shim", "hw"};
        m["umd"] = {"uapi", "hw"};
        const std::set<std::string_view> stack = {"umd", "panthor", "panfrost",    "mock_hw", "mock_jm",
                                                  "drm", "uapi",    "kernel_shim", "hw"};
        m["host"] = stack;
        auto above = [&](std::initializer_list<std::string_view> extra) {
            std::set<std::string_view> s = stack;
            s.insert("host");
            s.insert(extra.begin(), extra.end());
            return s;
        };
        m["testkit"] = above({});
        m["tools"] = above({});
        m["fuzz"] = above({"testkit"});
        m["bench"] = above({"testkit"});
        m["tests"] = above({"testkit", "tools", "fuzz", "bench"});
        return m;
    }();
    return r;
}

bool has_prefix_folder(std::string_view path, std::string_view folder) {
    return path.size() > folder.size() && path.substr(0, folder.size()) == folder && path[folder.size()] == '/';
}

std::string normalize(const std::string& path) {
    std::vector<std::string> parts;
    std::istringstream in(path);
    for (std::string part; std::getline(in, part, '/');) {
        if (part.empty() || part == ".")
            continue;
        if (part == "..") {
            if (parts.empty())
                return "";  // leaves the repository
            parts.pop_back();
        } else {
            parts.push_back(part);
        }
    }
    std::string out;
    for (const std::string& p : parts)
        out += (out.empty() ? "" : "/") + p;
    return out;
}

}  // namespace

std::string layer_of(std::string_view repo_path) {
    for (std::string_view l : kLayers)
        if (has_prefix_folder(repo_path, l))
            return std::string(l);
    return "";
}

bool may_include(std::string_view from, std::string_view to) {
    if (from == to)
        return true;
    auto it = rules().find(from);
    return it != rules().end() && it->second.count(to);
}

std::optional<std::string> resolve_include(std::string_view from_file, std::string_view spelled) {
    const std::string s(spelled);
    // By repository path (every include root is a project folder).
    if (!layer_of(s).empty() && s.find("..") == std::string::npos)
        return s;
    // Relative to the including file, as "..." finds it first.
    const std::string dir = std::filesystem::path(std::string(from_file)).parent_path().string();
    const std::string rel = normalize(dir + "/" + s);
    if (!rel.empty() && !layer_of(rel).empty())
        return rel;
    return std::nullopt;
}

std::vector<Violation> check_file(std::string_view repo_path, std::string_view text) {
    std::vector<Violation> out;
    const std::string from = layer_of(repo_path);
    if (from.empty())
        return out;
    std::istringstream in{std::string(text)};
    int lineno = 0;
    for (std::string line; std::getline(in, line);) {
        lineno++;
        size_t i = line.find_first_not_of(" \t");
        if (i == std::string::npos || line[i] != '#')
            continue;
        i = line.find_first_not_of(" \t", i + 1);
        if (i == std::string::npos || line.compare(i, 7, "include") != 0)
            continue;
        i = line.find_first_of("\"<", i + 7);
        if (i == std::string::npos)
            continue;
        const char close = line[i] == '"' ? '"' : '>';
        const size_t j = line.find(close, i + 1);
        if (j == std::string::npos)
            continue;
        const std::string spelled = line.substr(i + 1, j - i - 1);
        std::optional<std::string> target = resolve_include(repo_path, spelled);
        if (!target)
            continue;
        const std::string to = layer_of(*target);
        if (!may_include(from, to))
            out.push_back({std::string(repo_path), lineno, spelled, from, to});
    }
    return out;
}

std::vector<Violation> check_tree(const std::filesystem::path& root) {
    namespace fs = std::filesystem;
    std::vector<Violation> out;
    std::vector<fs::path> files;
    for (std::string_view layer : kLayers) {
        const fs::path dir = root / std::string(layer);
        if (!fs::is_directory(dir))
            continue;
        for (auto it = fs::recursive_directory_iterator(dir); it != fs::recursive_directory_iterator(); ++it) {
            const std::string name = it->path().filename().string();
            if (it->is_directory() &&
                (name == "build" || name == "corpus" || name == "crashes" || name.starts_with("."))) {
                it.disable_recursion_pending();
                continue;
            }
            const std::string ext = it->path().extension().string();
            if (it->is_regular_file() && (ext == ".h" || ext == ".hpp" || ext == ".cpp" || ext == ".c" || ext == ".cc"))
                files.push_back(it->path());
        }
    }
    std::sort(files.begin(), files.end());
    for (const fs::path& f : files) {
        std::ifstream in(f);
        std::stringstream text;
        text << in.rdbuf();
        for (Violation& v : check_file(fs::relative(f, root).generic_string(), text.str()))
            out.push_back(std::move(v));
    }
    return out;
}

std::string to_string(const Violation& v) {
    return v.file + ":" + std::to_string(v.line) + ": #include \"" + v.include + "\": " + v.from_layer +
           " may not include " + v.to_layer;
}

}  // namespace upanthor::layout
