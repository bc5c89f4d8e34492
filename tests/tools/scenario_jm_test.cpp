// Tests of the scenario parser's Job Manager part (tools/upanthor/scenario_parse_jm.cpp): the g52
// examples map onto the model, and JM-specific mistakes (sections of the other model, job keys,
// dependencies, timeline syncobjs, fault kinds) are rejected at their exact line:column. Running
// the examples and checking their outcomes is tools/upanthor/cli_test.py (run_g52_*).
#include <gtest/gtest.h>

#include <string>

#include "tests/tools/scenario_test_util.h"
#include "tools/upanthor/scenario.h"
#include "uapi/drm/panfrost_drm.h"

namespace {

using namespace upanthor::scenario;
using namespace upanthor::scenario::testing;

ParseResult example(const char* name) {
    return parse_scenario_file(std::string(UPANTHOR_SCENARIO_DIR) + "/" + name);
}

TEST(ScenarioJmExamples, FrameLoopIsGeometryOnSlotOneThenFragmentOnSlotZero) {
    ParseResult r = example("g52-frame.toml");
    ASSERT_TRUE(r.ok()) << dump(r);
    const Scenario& s = *r.scenario;
    EXPECT_EQ(s.model, GpuModel::G52);
    ASSERT_EQ(s.chains.size(), 2u);
    ASSERT_EQ(s.chains[0].jobs.size(), 4u);
    EXPECT_EQ(s.chains[0].jobs[0].type, JmJobType::Draw);
    EXPECT_EQ(s.chains[0].jobs[0].invocations, 30000u);
    EXPECT_TRUE(s.chains[0].jobs[3].barrier);
    EXPECT_EQ(s.chains[1].jobs[0].type, JmJobType::Fragment);
    EXPECT_EQ(s.chains[1].jobs[0].tiles_x, 120u);
    EXPECT_EQ(s.chains[1].jobs[0].tiles_y, 68u);
    ASSERT_EQ(s.jm_submissions.size(), 2u);
    const JmSubmission& geo = s.jm_submissions[0];
    const JmSubmission& frag = s.jm_submissions[1];
    EXPECT_EQ(geo.requirements, 0u);
    EXPECT_EQ(frag.requirements, PANFROST_JD_REQ_FS);
    EXPECT_EQ(geo.count, 60u);
    EXPECT_EQ(geo.every_us, 16667u);
    ASSERT_TRUE(frag.ctx.has_value());
    EXPECT_EQ(s.jm_ctxs[*frag.ctx].priority, static_cast<u32>(PANFROST_JM_CTX_PRIORITY_MEDIUM));
    ASSERT_EQ(frag.waits.size(), 1u);
    EXPECT_EQ(s.syncobjs[frag.waits[0].syncobj].name, "tiled");
    EXPECT_EQ(s.syncobjs[geo.signals[0].syncobj].name, "tiled");
    // The chain's BO joins the BO list by itself.
    ASSERT_EQ(geo.bos.size(), 1u);
    EXPECT_EQ(s.bos[geo.bos[0]].name, "stats");
    ASSERT_TRUE(s.expect.gpu_resets.has_value());
    EXPECT_EQ(*s.expect.gpu_resets, 0u);
}

TEST(ScenarioJmExamples, HangHeapAndFaultMapOntoTheirTypes) {
    ParseResult hang = example("g52-hang.toml");
    ASSERT_TRUE(hang.ok()) << dump(hang);
    ASSERT_EQ(hang.scenario->faults.size(), 1u);
    const mock_hw::FaultSpec& f = hang.scenario->faults[0].spec;
    EXPECT_EQ(f.kind, mock_hw::FaultKind::JobHang);
    EXPECT_EQ(f.js, 1);
    EXPECT_EQ(f.trigger.type, mock_hw::FaultTrigger::Type::Nth);
    EXPECT_EQ(f.trigger.nth, 1u);
    EXPECT_EQ(hang.scenario->jm_ctxs[1].priority, static_cast<u32>(PANFROST_JM_CTX_PRIORITY_LOW));

    ParseResult heap = example("g52-heap.toml");
    ASSERT_TRUE(heap.ok()) << dump(heap);
    EXPECT_TRUE(heap.scenario->bos[0].heap);
    EXPECT_FALSE(heap.scenario->bos[1].heap);
    EXPECT_EQ(heap.scenario->chains[0].jobs[4].offset, 0xFFFFF8u);

    ParseResult fault = example("g52-fault.toml");
    ASSERT_TRUE(fault.ok()) << dump(fault);
    const JmJob& wild = fault.scenario->chains[0].jobs[1];
    EXPECT_EQ(wild.type, JmJobType::WriteValue);
    EXPECT_FALSE(wild.bo.has_value());
    EXPECT_EQ(wild.address, 0x100000u);
    bool einval = false;
    for (const FenceExpect& fe : fault.scenario->expect.fences)
        einval |= fe.fence == "wild" && fe.state == FenceExpect::State::Error && fe.error == -EINVAL;
    EXPECT_TRUE(einval);
}

// A g52 scenario with one of everything; each row appends a snippet with one mistake.
constexpr const char* kJmPrelude = R"([gpu]
model = "g52"
[[client]]
name = "app"
[[vm]]
name = "vm"
client = "app"
[[bo]]
name = "data"
vm = "vm"
size = 4096
[[syncobj]]
name = "bin"
client = "app"
[[chain]]
name = "c"
jobs = [{ type = "null" }]
)";
constexpr unsigned kJmPreludeLines = 17;

class ScenarioJmDiagnostic : public ::testing::TestWithParam<DiagRow> {};

TEST_P(ScenarioJmDiagnostic, RejectedAtExactPosition) {
    const DiagRow& row = GetParam();
    ParseResult r = parse_scenario(std::string(kJmPrelude) + row.snippet, "s.toml");
    ASSERT_FALSE(r.ok());
    ASSERT_EQ(r.diagnostics.size(), 1u) << dump(r);
    const Diagnostic& d = r.diagnostics[0];
    EXPECT_EQ(d.loc.line, kJmPreludeLines + row.line) << d.to_string();
    EXPECT_EQ(d.loc.column, row.column) << d.to_string();
    EXPECT_NE(d.message.find(row.message_part), std::string::npos) << d.to_string();
}

const DiagRow kJmDiagRows[] = {
    {"GroupOnG52", "[[group]]\nname = \"g\"\nvm = \"vm\"\nqueues = [{ name = \"q\" }]\n", 1, 1,
     "[[group]] in a scenario for GPU model g52"},
    {"UnknownJobType", "[[chain]]\nname = \"d\"\njobs = [{ type = \"blit\" }]\n", 3, 18, "unknown job type 'blit'"},
    {"PayloadKeyOfAnotherType", "[[chain]]\nname = \"d\"\njobs = [{ type = \"compute\", tiles_x = 4 }]\n", 3, 39,
     "'tiles_x' on a compute job"},
    {"WriteValueWithoutTarget", "[[chain]]\nname = \"d\"\njobs = [{ type = \"write_value\", value = 1 }]\n", 3, 9,
     "needs exactly one of 'bo'"},
    {"DepOnALaterJob", "[[chain]]\nname = \"d\"\njobs = [{ type = \"null\" }, { type = \"null\", dep = 1 }]\n", 3, 51,
     "out of range"},
    {"EmptyChain", "[[chain]]\nname = \"d\"\njobs = []\n", 1, 1, "has no jobs"},
    {"UnknownRequirement", "[[jm_submit]]\nchain = \"c\"\nclient = \"app\"\nat_us = 0\nrequirements = [\"vs\"]\n", 5,
     17, "unknown requirement"},
    {"CtxOfAnotherClient",
     "[[client]]\nname = \"other\"\n[[jm_ctx]]\nname = \"x\"\nclient = \"other\"\n"
     "[[jm_submit]]\nchain = \"c\"\nclient = \"app\"\nctx = \"x\"\nat_us = 0\n",
     9, 7, "jm_ctx 'x' belongs to client 'other'"},
    {"UnknownCtxPriority", "[[jm_ctx]]\nname = \"x\"\nclient = \"app\"\npriority = \"realtime\"\n", 4, 12,
     "unknown JM context priority 'realtime'"},
    {"TimelineSyncobj", "[[syncobj]]\nname = \"tl\"\nclient = \"app\"\ntimeline = true\n", 1, 1,
     "timeline syncobj 'tl' on GPU model g52"},
    {"CsfFaultKind", "[[fault]]\nkind = \"FwHang\"\nat_us = 1\n", 2, 8,
     "unknown fault kind 'FwHang' for GPU model g52 (expected one of: GpuFault, ResetNeverCompletes"},
    {"JobSlotOutOfRange", "[[fault]]\nkind = \"JobHang\"\nalways = true\njs = 3\n", 4, 6, "-1..2"},
    {"HeapWithValues", "[[bo]]\nname = \"h\"\nvm = \"vm\"\nsize = 4096\nheap = true\npattern = 1\n", 5, 8,
     "a heap BO with 'pattern'"},
};

INSTANTIATE_TEST_SUITE_P(Table, ScenarioJmDiagnostic, ::testing::ValuesIn(kJmDiagRows),
                         [](const ::testing::TestParamInfo<DiagRow>& info) { return std::string(info.param.name); });

// The JM sections and kinds are not accepted on the G610.
TEST(ScenarioJmParse, JmSectionsAndKindsAreRejectedOnTheG610) {
    ParseResult r = parse_scenario(
        "[[chain]]\nname = \"c\"\njobs = [{ type = \"null\" }]\n"
        "[[fault]]\nkind = \"JobHang\"\nalways = true\n"
        "[expect]\ngpu_resets = 0\n",
        "s.toml");
    ASSERT_FALSE(r.ok());
    const std::string all = dump(r);
    EXPECT_NE(all.find("s.toml:1:1: [[chain]] in a scenario for GPU model g610"), std::string::npos) << all;
    EXPECT_NE(all.find("s.toml:5:8: unknown fault kind 'JobHang'"), std::string::npos) << all;
    EXPECT_NE(all.find("s.toml:8:14: 'gpu_resets' on GPU model g610"), std::string::npos) << all;
}

}  // namespace
