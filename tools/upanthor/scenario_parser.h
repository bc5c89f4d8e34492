// The scenario parser's sections (no upstream counterpart), internal to upanthor_scenario.
//
// ScenarioParser reads one TOML document section by section, in dependency order (clients, VMs,
// BOs, heaps, groups, syncobjs, jobs, submissions, faults, expectations), on top of the checked
// access of TomlAccess. Each section registers its objects' names; a later reference resolves
// through them to an index. An object that is rejected is "poisoned": references to it are not
// reported again. Where the sections live:
//   scenario.cpp               run / run_fault / parse_root, names and references
//   scenario_parse_setup.cpp   [scenario] [gpu] [[client]] [[vm]] [[bo]] [[heap]] [[group]] [[syncobj]]
//   scenario_parse_jobs.cpp    [[job]] (its `asm` through umd/cs_asm) and [[submit]]
//   scenario_parse_fault.cpp   [[fault]]
//   scenario_parse_expect.cpp  [expect]
//   scenario_parse_jm.cpp      the g52 (Job Manager) sections [[jm_ctx]] [[chain]] [[jm_submit]] and
//                              which sections each GPU model allows
#pragma once
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tools/upanthor/scenario.h"
#include "tools/upanthor/toml_access.h"

namespace upanthor::scenario {

class ScenarioParser : public TomlAccess {
public:
    explicit ScenarioParser(std::string_view file) : TomlAccess(file) { sc_.file = file_; }

    ParseResult run(std::string_view text);
    // One [[fault]] table alone (`--inject`), validated against `gpu`.
    InjectResult run_fault(std::string_view text, const mock_hw::GpuConfig& gpu, GpuModel model);

private:
    // ---- names and references (scenario.cpp) ----
    // A name: a non-empty string without spaces, dots or '@' (they separate references).
    std::optional<std::string> get_name(const toml::table& t, const std::string& what);
    // Resolves a reference by name in `names`; `kind` says what it names.
    std::optional<size_t> get_ref(const toml::table& t, std::string_view key, const std::string& what, bool required,
                                  const std::map<std::string, size_t>& names, const char* kind);
    static std::string expected_names(const std::map<std::string, size_t>& names, const char* kind);
    // An object that was named but rejected: references to it are not reported again.
    void poison(const char* kind, const std::optional<std::string>& name);
    // Registers a unique name; false (and a diagnostic) on a duplicate.
    bool define(std::map<std::string, size_t>& names, std::map<std::string, SourceLoc>& where, const std::string& name,
                size_t idx, const toml::table& t, const char* kind);
    // `group` + `queue` keys naming one queue.
    std::optional<QueueRef> get_queue_ref(const toml::table& t, const std::string& what);
    // An `offset` key that must be 8-byte aligned inside the BO.
    bool check_bo_offset(const toml::table& t, size_t bo, u64 off);

    void parse_root(const toml::table& root);

    // ---- setup (scenario_parse_setup.cpp) ----
    void parse_meta(const toml::table& t);
    void parse_gpu(const toml::table& t);
    void parse_client(const toml::table& t);
    void parse_vm(const toml::table& t);
    void parse_bo(const toml::table& t);
    void parse_heap(const toml::table& t);
    void parse_group(const toml::table& t);
    void parse_syncobj(const toml::table& t);

    // ---- work (scenario_parse_jobs.cpp) ----
    void parse_job(const toml::table& t);
    // A job's `asm` string through umd::cs::parse_asm, its positions mapped onto the file.
    bool parse_asm(const toml::node& n, Job& j);
    // A job's BOs and heaps must be mapped in the VM of the group it is submitted to.
    std::optional<std::string> job_vm_conflict(const Job& j, size_t vm);
    std::vector<SyncRef> parse_sync_refs(const toml::table& t, std::string_view key, std::optional<size_t> client,
                                         bool* ok);
    void parse_submit(const toml::table& t);

    // ---- Job Manager work (scenario_parse_jm.cpp) ----
    void parse_jm_ctx(const toml::table& t);
    void parse_chain(const toml::table& t);
    std::optional<JmJob> parse_jm_job(const toml::table& t, size_t position);
    void parse_jm_submit(const toml::table& t);
    // Sections the model does not run are errors (g52: no groups/jobs/submits/heaps, binary
    // syncobjs only; g610: no JM sections, no heap BOs).
    void check_model_sections(const toml::table& root);
    // [[jm_submit]] timing, as [[submit]]'s: at_us, or every_us/fps + count [+ start_us]. False
    // (reported) when malformed.
    bool parse_timing(const toml::table& t, const std::string& what, u64* start_us, u64* every_us, u32* count);
    // A `fence` name, unique over all submissions; false (reported) when malformed.
    bool parse_fence_name(const toml::table& t, const std::string& what, size_t index, std::string* out);

    // ---- faults and expectations ----
    void parse_fault(const toml::table& t);   // scenario_parse_fault.cpp
    void parse_expect(const toml::table& t);  // scenario_parse_expect.cpp

    Scenario sc_;
    std::map<std::string, size_t> client_names_, vm_names_, bo_names_, heap_names_, group_names_, job_names_,
        syncobj_names_, fence_names_, jm_ctx_names_, chain_names_;
    std::map<std::string, SourceLoc> client_where_, vm_where_, bo_where_, heap_where_, group_where_, job_where_,
        syncobj_where_, jm_ctx_where_, chain_where_;
    std::map<std::string, std::map<std::string, size_t>> queue_names_;  // group -> queue -> index
    std::set<std::pair<std::string, std::string>> invalid_;             // (kind, name) rejected
};

}  // namespace upanthor::scenario
