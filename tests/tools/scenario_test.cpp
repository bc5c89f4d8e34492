// Tests of the upanthor scenario parser/validator (tools/upanthor/scenario.h): the shipped
// examples parse, the model holds what the file says, and each kind of malformed input is
// rejected with its exact line:column.
#include "tools/upanthor/scenario.h"
#include "tests/tools/scenario_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "uapi/drm/panthor_drm.h"

namespace {

using namespace upanthor::scenario;
using namespace upanthor::scenario::testing;

TEST(ScenarioExamples, EveryShippedScenarioParses) {
    std::vector<std::filesystem::path> files;
    for (auto& e : std::filesystem::directory_iterator(UPANTHOR_SCENARIO_DIR))
        if (e.path().extension() == ".toml")
            files.push_back(e.path());
    std::sort(files.begin(), files.end());
    ASSERT_GE(files.size(), 2u) << "no scenarios found in " << UPANTHOR_SCENARIO_DIR;
    for (auto& f : files) {
        ParseResult r = parse_scenario_file(f.string());
        EXPECT_TRUE(r.ok()) << f << ":\n" << dump(r);
        EXPECT_EQ(r.ok(), r.diagnostics.empty());
    }
}

// The example in the format reference stays valid.
TEST(ScenarioExamples, DocumentationExampleParses) {
    std::ifstream in(UPANTHOR_DOCS_DIR "/scenario-format.md");
    ASSERT_TRUE(in) << "cannot read docs/scenario-format.md";
    std::stringstream ss;
    ss << in.rdbuf();
    std::string doc = ss.str();
    size_t begin = doc.find("```toml\n");
    ASSERT_NE(begin, std::string::npos);
    begin += 8;
    size_t end = doc.find("```", begin);
    ASSERT_NE(end, std::string::npos);
    ParseResult r = parse_scenario(doc.substr(begin, end - begin), "scenario-format.md");
    ASSERT_TRUE(r.ok()) << dump(r);
    EXPECT_EQ(r.scenario->submissions[0].count, 600u);
}

TEST(ScenarioExamples, ComputeModelHoldsWhatTheFileSays) {
    ParseResult r = parse_scenario_file(std::string(UPANTHOR_SCENARIO_DIR) + "/compute.toml");
    ASSERT_TRUE(r.ok()) << dump(r);
    const Scenario& s = *r.scenario;
    EXPECT_EQ(s.name, "compute");
    EXPECT_EQ(s.seed, 1u);
    EXPECT_EQ(s.duration_us, 100'000u);
    EXPECT_EQ(s.gpu.mcu.group_num, 8u);
    EXPECT_EQ(s.gpu.id.shader_present, 0xFu);
    EXPECT_EQ(s.gpu.lat.csg_state, 10'000);
    EXPECT_EQ(s.gpu.lat.csg_suspend, mock_hw::GpuLatencies{}.csg_suspend);  // untouched default

    ASSERT_EQ(s.bos.size(), 1u);
    EXPECT_EQ(s.bos[0].size, 64u << 10);
    EXPECT_EQ(s.bos[0].pattern, 0xCAFEF00Du);
    ASSERT_EQ(s.bos[0].values.size(), 1u);
    EXPECT_EQ(s.bos[0].values[0].offset, 0x100u);

    ASSERT_EQ(s.groups.size(), 1u);
    ASSERT_EQ(s.groups[0].queues.size(), 2u);
    EXPECT_EQ(s.groups[0].queues[0].priority, 1);
    EXPECT_EQ(s.groups[0].queues[0].ring_size, 16384u);
    EXPECT_EQ(s.groups[0].queues[1].ring_size, 16384u);  // default
    EXPECT_EQ(s.groups[0].priority, GroupPriority::Medium);

    ASSERT_EQ(s.jobs.size(), 4u);
    EXPECT_EQ(s.jobs[0].kind, JobKind::Compute);
    EXPECT_EQ(s.jobs[0].workgroups, 64u);
    EXPECT_EQ(s.jobs[0].duration_us, 200u);
    EXPECT_EQ(s.jobs[1].kind, JobKind::Store);
    EXPECT_EQ(s.jobs[1].value, 42u);
    EXPECT_EQ(s.jobs[2].kind, JobKind::Wait);
    EXPECT_EQ(s.jobs[2].wait_queue.queue, 0u);
    EXPECT_EQ(s.jobs[2].value, 2u);
    const Job& a = s.jobs[3];
    ASSERT_EQ(a.kind, JobKind::Asm);
    ASSERT_EQ(a.instrs.size(), 5u);
    EXPECT_EQ(a.instrs[0].op, AsmOp::Move48);
    EXPECT_EQ(a.instrs[0].bo_ref, std::optional<size_t>(0));
    EXPECT_EQ(a.instrs[0].imm, 0x200);
    EXPECT_EQ(a.instrs[1].op, AsmOp::Load);
    EXPECT_EQ(a.instrs[1].dst, 2);
    EXPECT_EQ(a.instrs[1].mask, 0x1);
    EXPECT_EQ(a.instrs[2].op, AsmOp::AddImm32);
    EXPECT_EQ(a.instrs[2].imm, 1);
    EXPECT_EQ(a.instrs[4].op, AsmOp::Wait);
    EXPECT_EQ(a.instrs[4].imm, 0xFF);
    // Each instruction knows its line in the file.
    EXPECT_EQ(a.instrs[1].loc.line, a.instrs[0].loc.line + 1);

    ASSERT_EQ(s.submissions.size(), 4u);
    EXPECT_EQ(s.submissions[1].signals.size(), 1u);
    EXPECT_EQ(s.submissions[1].signals[0].point, 1u);
    EXPECT_EQ(s.submissions[3].every_us, 1000u);
    EXPECT_EQ(s.submissions[3].count, 10u);
    EXPECT_EQ(s.submissions[3].start_us, 1000u);

    ASSERT_EQ(s.expect.fences.size(), 4u);
    ASSERT_EQ(s.expect.groups.size(), 1u);
    EXPECT_EQ(s.expect.groups[0].state, 0u);
    ASSERT_EQ(s.expect.memory.size(), 1u);
    EXPECT_EQ(s.expect.memory[0].value, 42u);
    ASSERT_EQ(s.expect.latency.size(), 1u);
    EXPECT_EQ(s.expect.latency[0].max_us, std::optional<u64>(5000));
}

TEST(ScenarioExamples, RotationHasFortyGroupsAndSixtyFps) {
    ParseResult r = parse_scenario_file(std::string(UPANTHOR_SCENARIO_DIR) + "/rotation.toml");
    ASSERT_TRUE(r.ok()) << dump(r);
    const Scenario& s = *r.scenario;
    u32 groups = 0;
    for (auto& g : s.groups)
        groups += g.instances;
    EXPECT_EQ(groups, 40u);
    EXPECT_EQ(s.gpu.mcu.group_num, 8u);
    EXPECT_TRUE(s.clients[1].cap_sys_nice);
    EXPECT_EQ(s.groups[2].priority, GroupPriority::High);
    EXPECT_EQ(s.submissions[2].every_us, 16667u);  // fps = 60
    EXPECT_EQ(s.submissions[2].count, 60u);
}

TEST(ScenarioParse, FaultsAndExpectationsMapOntoTheirTypes) {
    ParseResult r = parse_scenario(R"(
[[client]]
name = "app"
[[vm]]
name = "vm"
client = "app"
[[group]]
name = "g"
vm = "vm"
queues = [{ name = "q" }]
[[job]]
name = "spin"
hang = {}
[[submit]]
group = "g"
queue = "q"
job = "spin"
at_us = 0
fence = "f"
[[fault]]
kind = "CsFault"
after_count = 3
csg = 2
exception = 0x40
cs_event = "instruction"
[[fault]]
kind = "FwHang"
at_us = 500
[expect]
fences = { f = "ETIMEDOUT" }
groups = { g = ["timedout", "innocent"] }
)",
                                   "t.toml");
    ASSERT_TRUE(r.ok()) << dump(r);
    const Scenario& s = *r.scenario;
    ASSERT_EQ(s.faults.size(), 2u);
    EXPECT_EQ(s.faults[0].spec.kind, mock_hw::FaultKind::CsFault);
    EXPECT_EQ(s.faults[0].spec.trigger.type, mock_hw::FaultTrigger::Type::Nth);
    EXPECT_EQ(s.faults[0].spec.trigger.nth, 3u);
    EXPECT_EQ(s.faults[0].spec.csg, 2);
    EXPECT_EQ(s.faults[0].spec.exception, 0x40u);
    EXPECT_EQ(s.faults[0].spec.cs_event, mock_hw::CsFaultEvent::Instruction);
    EXPECT_EQ(s.faults[1].spec.kind, mock_hw::FaultKind::FwHang);
    EXPECT_EQ(s.faults[1].spec.trigger.type, mock_hw::FaultTrigger::Type::AtTime);
    EXPECT_EQ(s.faults[1].spec.trigger.at, 500'000);
    ASSERT_EQ(s.expect.fences.size(), 1u);
    EXPECT_EQ(s.expect.fences[0].state, FenceExpect::State::Error);
    EXPECT_EQ(s.expect.fences[0].error, -ETIMEDOUT);
    ASSERT_EQ(s.expect.groups.size(), 1u);
    EXPECT_EQ(s.expect.groups[0].state, DRM_PANTHOR_GROUP_STATE_TIMEDOUT | DRM_PANTHOR_GROUP_STATE_INNOCENT);
    EXPECT_EQ(s.jobs[0].kind, JobKind::Hang);
}

TEST(ScenarioParse, AsmSubsetParsesEveryMnemonicWithItsOperands) {
    ParseResult r = parse_scenario(
        "[[client]]\nname = \"a\"\n[[vm]]\nname = \"v\"\nclient = \"a\"\n"
        "[[bo]]\nname = \"b\"\nvm = \"v\"\nsize = 4096\n"
        "[[job]]\nname = \"j\"\nasm = \"\"\"\r\n"
        "nop\r\n"
        "MOVE48 d4, @b\r\n"
        "MOVE32 r1, -1   # comment\r\n"
        "ADD_IMM32 r1, r1, -8\r\n"
        "LOAD d6, d4, 16\r\n"
        "STORE r1, d4, -8\r\n"
        "WAIT 0x3\r\n"
        "SYNC_ADD64 d4, d6\r\n"
        "SYNC_WAIT64 d4, d6, gt\r\n"
        "\"\"\"\r\n",
        "t.toml");
    ASSERT_TRUE(r.ok()) << dump(r);
    const auto& in = r.scenario->jobs[0].instrs;
    ASSERT_EQ(in.size(), 9u);
    const AsmOp ops[] = {AsmOp::Nop,   AsmOp::Move48, AsmOp::Move32,    AsmOp::AddImm32,  AsmOp::Load,
                         AsmOp::Store, AsmOp::Wait,   AsmOp::SyncAdd64, AsmOp::SyncWait64};
    for (size_t i = 0; i < 9; i++) {
        EXPECT_EQ(in[i].op, ops[i]) << i;
        EXPECT_EQ(in[i].loc.line, 13 + i) << i;
    }
    EXPECT_EQ(in[1].dst, 4);
    EXPECT_EQ(in[1].bo_ref, std::optional<size_t>(0));
    EXPECT_EQ(in[1].imm, 0);
    EXPECT_EQ(in[2].imm, -1);
    EXPECT_EQ(in[3].imm, -8);
    EXPECT_EQ(in[4].mask, 0x3);  // LOAD d6: the pair
    EXPECT_EQ(in[4].dst, 6);
    EXPECT_EQ(in[4].src, 4);
    EXPECT_EQ(in[4].imm, 16);
    EXPECT_EQ(in[5].mask, 0x1);
    EXPECT_EQ(in[5].imm, -8);
    EXPECT_EQ(in[6].imm, 3);
    EXPECT_TRUE(in[8].cond_greater);
}

// An `asm` job also takes the instructions as `upanthor disasm` prints them (umd/cs_asm).
TEST(ScenarioParse, AsmAcceptsTheDisassemblersSpelling) {
    ParseResult r = parse_scenario(
        "[[client]]\nname = \"a\"\n[[vm]]\nname = \"v\"\nclient = \"a\"\n"
        "[[bo]]\nname = \"b\"\nvm = \"v\"\nsize = 4096\n"
        "[[job]]\nname = \"j\"\nasm = \"\"\"\n"
        "MOVE d4, @b+8      # the disassembler prints MOVE for MOVE48\n"
        "LOAD_MULTIPLE r6, [d4 + 16], mask=0x0003\n"
        "SYNC_WAIT64.gt.reject [d4], d6\n"
        "WAIT.progress wait=0x3\n"
        "\"\"\"\n",
        "t.toml");
    ASSERT_TRUE(r.ok()) << dump(r);
    const auto& in = r.scenario->jobs[0].instrs;
    ASSERT_EQ(in.size(), 4u);
    EXPECT_EQ(in[0].op, AsmOp::Move48);
    EXPECT_EQ(in[0].bo_ref, std::optional<size_t>(0));
    EXPECT_EQ(in[0].imm, 8);
    EXPECT_EQ(in[1].op, AsmOp::Load);
    EXPECT_EQ(in[1].mask, 0x3);
    EXPECT_EQ(in[1].imm, 16);
    EXPECT_TRUE(in[2].cond_greater);
    EXPECT_TRUE(in[2].reject);
    EXPECT_TRUE(in[3].progress);
    EXPECT_EQ(in[3].loc.line, 16u);
    EXPECT_EQ(in[3].loc.column, 1u);
}

TEST(ScenarioParse, ReportsEveryProblemNotJustTheFirst) {
    ParseResult r =
        parse_scenario("[[client]]\nname = \"a\"\ncolour = 1\n[[vm]]\nname = \"v\"\nclient = \"b\"\n", "t.toml");
    ASSERT_FALSE(r.ok());
    ASSERT_EQ(r.diagnostics.size(), 2u) << dump(r);
    EXPECT_EQ(r.diagnostics[0].to_string().substr(0, 12), "t.toml:3:1: ");
    EXPECT_EQ(r.diagnostics[1].to_string().substr(0, 12), "t.toml:6:10:");
}

TEST(ScenarioParse, UnreadableFileIsADiagnostic) {
    ParseResult r = parse_scenario_file("/nonexistent/x.toml");
    ASSERT_FALSE(r.ok());
    ASSERT_EQ(r.diagnostics.size(), 1u);
    EXPECT_NE(r.diagnostics[0].message.find("cannot read"), std::string::npos);
}

// ---- one row per diagnostic: the snippet follows kPrelude, lines count from the snippet ----

constexpr const char* kPrelude = R"([[client]]
name = "app"
[[vm]]
name = "vm"
client = "app"
[[bo]]
name = "data"
vm = "vm"
size = 4096
[[group]]
name = "g"
vm = "vm"
queues = [{ name = "q" }]
[[job]]
name = "j"
store = { bo = "data", offset = 0, value = 1 }
[[syncobj]]
name = "bin"
client = "app"
)";
constexpr unsigned kPreludeLines = 19;

class ScenarioDiagnostic : public ::testing::TestWithParam<DiagRow> {};

TEST_P(ScenarioDiagnostic, RejectedAtExactPosition) {
    const DiagRow& row = GetParam();
    ParseResult r = parse_scenario(std::string(kPrelude) + row.snippet, "s.toml");
    ASSERT_FALSE(r.ok());
    EXPECT_FALSE(r.scenario.has_value());
    ASSERT_EQ(r.diagnostics.size(), 1u) << dump(r);
    const Diagnostic& d = r.diagnostics[0];
    EXPECT_EQ(d.file, "s.toml");
    EXPECT_EQ(d.loc.line, kPreludeLines + row.line) << d.to_string();
    EXPECT_EQ(d.loc.column, row.column) << d.to_string();
    EXPECT_NE(d.message.find(row.message_part), std::string::npos) << d.to_string();
}

const DiagRow kDiagRows[] = {
    // TOML syntax (toml++'s own message).
    {"SyntaxUnterminatedString", "[[job]]\nname = \"x\n", 2, 10, "string"},
    {"SyntaxMissingValue", "[scenario]\nseed =\n", 2, 7, ""},
    // Unknown keys, at every level.
    {"UnknownTopLevelKey", "[frobnicate]\nx = 1\n", 1, 2, "unknown key 'frobnicate' in the top level"},
    {"UnknownKeyInTable", "[gpu]\ncsg_slot = 4\n", 2, 1, "unknown key 'csg_slot' in [gpu] (expected one of: csg_slots"},
    {"UnknownKeyInArrayTable", "[[client]]\nname = \"b\"\nprivileged = true\n", 3, 1,
     "expected one of: name, cap_sys_nice"},
    {"UnknownKeyInInlineTable", "[[job]]\nname = \"c\"\ncompute = { workgroups = 1, duration_us = 5, colour = 1 }\n", 3,
     46, "unknown key 'colour' in 'compute'"},
    {"UnknownLatency", "[gpu.latency_us]\ncsg_stat = 1\n", 2, 1, "in [gpu.latency_us]"},
    {"UnknownQueueKey", "[[group]]\nname = \"h\"\nvm = \"vm\"\nqueues = [{ name = \"q\", prio = 1 }]\n", 4, 25,
     "unknown key 'prio'"},
    // Wrong types.
    {"WrongTypeBool", "[[bo]]\nname = \"b\"\nvm = \"vm\"\nsize = true\n", 4, 8, "'size' is a boolean (expected a size"},
    {"WrongTypeString", "[gpu]\ncsg_slots = \"8\"\n", 2, 13, "'csg_slots' is a string (expected an integer in 1..31)"},
    {"WrongTypeTableForArray", "[expect]\nmemory = 3\n", 2, 10, "'memory' is an integer (expected an array of tables"},
    {"WrongTypeAsm", "[[job]]\nname = \"a\"\nasm = 3\n", 3, 7, "'asm' is an integer (expected a string"},
    // Undefined references.
    {"UndefinedClient", "[[vm]]\nname = \"v2\"\nclient = \"nobody\"\n", 3, 10,
     "undefined client 'nobody' (expected one of: app)"},
    {"UndefinedVm", "[[bo]]\nname = \"b\"\nvm = \"nope\"\nsize = 1\n", 3, 6, "undefined vm 'nope'"},
    {"UndefinedGroup", "[[submit]]\ngroup = \"zz\"\nqueue = \"q\"\njob = \"j\"\nat_us = 0\n", 2, 9,
     "undefined group 'zz'"},
    {"UndefinedQueue", "[[submit]]\ngroup = \"g\"\nqueue = \"zz\"\njob = \"j\"\nat_us = 0\n", 3, 9,
     "undefined queue 'zz' in group 'g' (expected one of: q)"},
    {"UndefinedJob", "[[submit]]\ngroup = \"g\"\nqueue = \"q\"\njob = \"zz\"\nat_us = 0\n", 4, 7, "undefined job 'zz'"},
    {"UndefinedSyncobj",
     "[[submit]]\ngroup = \"g\"\nqueue = \"q\"\njob = \"j\"\nat_us = 0\nwaits = [{ syncobj = \"zz\" }]\n", 6, 22,
     "undefined syncobj 'zz'"},
    {"UndefinedHeap", "[[job]]\nname = \"t\"\ntiler_fragment = { heap = \"zz\", chunks = 1 }\n", 3, 27,
     "undefined heap 'zz'"},
    {"UndefinedBoInAsm", "[[job]]\nname = \"a\"\nasm = \"\"\"\nNOP\nMOVE48 d0, @zz\n\"\"\"\n", 5, 12,
     "undefined bo 'zz'"},
    {"UndefinedFence", "[expect]\nfences = { nope = \"signaled\" }\n", 2, 12, "undefined fence 'nope'"},
    {"UndefinedGroupInExpect", "[expect.groups]\nzz = []\n", 2, 1, "undefined group 'zz'"},
    {"UndefinedBoInExpect", "[[expect.memory]]\nbo = \"zz\"\noffset = 0\nvalue = 1\n", 2, 6, "undefined bo 'zz'"},
    {"DuplicateName", "[[client]]\nname = \"app\"\n", 2, 8, "duplicate client name 'app' (first defined at 1:1)"},
    {"GroupClientDoesNotOwnVm",
     "[[client]]\nname = \"other\"\n[[group]]\nname = \"h\"\nclient = \"other\"\nvm = \"vm\"\nqueues = [{ name = \"q\" "
     "}]\n",
     5, 10, "client 'other' does not own vm 'vm' (expected 'app'"},
    {"JobBoInAnotherVm",
     "[[client]]\nname=\"o\"\n[[vm]]\nname=\"v2\"\nclient=\"o\"\n[[group]]\nname=\"h\"\nvm=\"v2\"\nqueues=[{name=\"q\"}"
     "]\n"
     "[[submit]]\ngroup=\"h\"\nqueue=\"q\"\njob=\"j\"\nat_us=0\n",
     13, 5, "job 'j' uses bo 'data' of vm 'vm' but group 'h' runs in vm 'v2'"},
    {"SyncobjOfAnotherClient",
     "[[client]]\nname=\"o\"\n[[vm]]\nname=\"v2\"\nclient=\"o\"\n[[group]]\nname=\"h\"\nvm=\"v2\"\nqueues=[{name=\"q\"}"
     "]\n"
     "[[job]]\nname=\"k\"\nhang={}\n[[submit]]\ngroup=\"h\"\nqueue=\"q\"\njob=\"k\"\nat_us=0\nsignals=[{syncobj="
     "\"bin\"}]\n",
     18, 19, "syncobj 'bin' belongs to client 'app' (expected a syncobj of client 'o'"},
    // A rejected object is reported once, not again at every reference to it.
    {"NoCascadeFromRejectedObject",
     "[[bo]]\nname=\"b\"\nvm=\"nope\"\nsize=8\n[[job]]\nname=\"s\"\nstore={bo=\"b\",offset=0,value=1}\n"
     "[[job]]\nname=\"a\"\nasm=\"MOVE48 d0, @b\"\n[[submit]]\ngroup=\"g\"\nqueue=\"q\"\njob=\"s\"\nat_us=0\n",
     3, 4, "undefined vm 'nope'"},
    {"MissingRequiredKey", "[[vm]]\nname = \"v2\"\n", 1, 1, "missing key 'client' in [[vm]]"},
    // Impossible values.
    {"NegativeSize", "[[bo]]\nname = \"b\"\nvm = \"vm\"\nsize = -4096\n", 4, 8, "is negative"},
    {"ZeroSize", "[[bo]]\nname = \"b\"\nvm = \"vm\"\nsize = 0\n", 4, 8, "out of range"},
    {"BadSizeString", "[[bo]]\nname = \"b\"\nvm = \"vm\"\nsize = \"12Q\"\n", 4, 8, "is not a number"},
    {"UnalignedVa", "[[bo]]\nname = \"b\"\nvm = \"vm\"\nsize = 1\nva = 0x1234\n", 5, 6, "not page aligned"},
    {"BoValueOutsideBo", "[[bo]]\nname = \"b\"\nvm = \"vm\"\nsize = 16\nvalues = [{ offset = 16, value = 1 }]\n", 5, 22,
     "inside the BO"},
    {"RingSizeNotPow2", "[[group]]\nname = \"h\"\nvm = \"vm\"\nqueues = [{ name = \"q\", ring_size = 5000 }]\n", 4, 37,
     "not a power of two in 4096..65536"},
    {"RingSizeTooBig", "[[group]]\nname = \"h\"\nvm = \"vm\"\nqueues = [{ name = \"q\", ring_size = \"128K\" }]\n", 4,
     37, "not a power of two"},
    {"QueuePriorityOutOfRange", "[[group]]\nname = \"h\"\nvm = \"vm\"\nqueues = [{ name = \"q\", priority = 16 }]\n", 4,
     36, "out of range (expected an integer in 0..15)"},
    {"GroupPriorityUnknown",
     "[[group]]\nname = \"h\"\nvm = \"vm\"\npriority = \"urgent\"\nqueues = [{ name = \"q\" }]\n", 4, 12,
     "unknown priority 'urgent'"},
    {"TooManyQueues",
     "[[group]]\nname = \"h\"\nvm = \"vm\"\nqueues = [{name=\"a\"},{name=\"b\"},{name=\"c\"},{name=\"d\"},{name=\"e\"},"
     "{name=\"f\"},{name=\"g\"},{name=\"h\"},{name=\"i\"}]\n",
     4, 10, "has 9 queues (expected 1..8"},
    {"NoQueues", "[[group]]\nname = \"h\"\nvm = \"vm\"\nqueues = []\n", 4, 10, "has 0 queues"},
    {"DuplicateQueue", "[[group]]\nname = \"h\"\nvm = \"vm\"\nqueues = [{ name = \"q\" }, { name = \"q\" }]\n", 4, 36,
     "duplicate queue name 'q'"},
    {"FpsZero", "[[submit]]\ngroup = \"g\"\nqueue = \"q\"\njob = \"j\"\nfps = 0\ncount = 1\n", 5, 7,
     "expected a number > 0"},
    {"CountMissing", "[[submit]]\ngroup = \"g\"\nqueue = \"q\"\njob = \"j\"\nevery_us = 100\n", 1, 1,
     "missing key 'count'"},
    {"TwoTimings", "[[submit]]\ngroup = \"g\"\nqueue = \"q\"\njob = \"j\"\nat_us = 0\nfps = 30\n", 1, 1,
     "has 2 timings"},
    {"PointOnBinarySyncobj",
     "[[submit]]\ngroup = \"g\"\nqueue = \"q\"\njob = \"j\"\nat_us = 0\nsignals = [{ syncobj = \"bin\", point = 2 }]\n",
     6, 39, "'point' on binary syncobj 'bin'"},
    {"HeapChunkTooSmall",
     "[[heap]]\nname = \"h\"\nvm = \"vm\"\nchunk_size = \"64K\"\ninitial_chunks = 1\nmax_chunks = 2\ntarget_in_flight "
     "= 1\n",
     4, 14, "out of range (expected 131072..8388608)"},
    {"HeapInitialAboveMax",
     "[[heap]]\nname = \"h\"\nvm = \"vm\"\nchunk_size = \"256K\"\ninitial_chunks = 3\nmax_chunks = 2\ntarget_in_flight "
     "= 1\n",
     5, 18, "exceeds 'max_chunks'"},
    {"StoreOffsetOutsideBo", "[[job]]\nname = \"s\"\nstore = { bo = \"data\", offset = 4096, value = 1 }\n", 3, 33,
     "inside bo 'data' (expected 0..4088"},
    {"StoreOffsetUnaligned", "[[job]]\nname = \"s\"\nstore = { bo = \"data\", offset = 4, value = 1 }\n", 3, 33,
     "8-byte aligned"},
    {"JobWithTwoOps", "[[job]]\nname = \"x\"\nhang = {}\ncompute = { workgroups = 1, duration_us = 1 }\n", 1, 1,
     "has 2 operations"},
    {"JobWithNoOp", "[[job]]\nname = \"x\"\n", 1, 1, "has no operation"},
    {"ComputeZeroWorkgroups", "[[job]]\nname = \"c\"\ncompute = { workgroups = 0, duration_us = 5 }\n", 3, 26,
     "expected an integer in 1.."},
    {"AsmUnknownInstruction", "[[job]]\nname = \"a\"\nasm = \"\"\"\nNOP\n  JUMP d0\n\"\"\"\n", 5, 3,
     "unknown instruction 'JUMP' (expected one of: NOP, MOVE48"},
    {"AsmBadRegister", "[[job]]\nname = \"a\"\nasm = \"\"\"\nMOVE48 d1, 0x10\n\"\"\"\n", 4, 8,
     "bad register 'd1' (expected a 64-bit register"},
    {"AsmRegisterTooHigh", "[[job]]\nname = \"a\"\nasm = \"\"\"\nMOVE32 r92, 1\n\"\"\"\n", 4, 8,
     "expected a register r0..r91"},
    {"AsmOperandCount", "[[job]]\nname = \"a\"\nasm = \"\"\"\nADD_IMM32 r1, r2\n\"\"\"\n", 4, 1,
     "takes 3 operands, got 2"},
    {"AsmImmediateTooBig", "[[job]]\nname = \"a\"\nasm = \"\"\"\nMOVE48 d0, 0x1000000000000\n\"\"\"\n", 4, 12,
     "bad immediate"},
    {"AsmBadCondition", "[[job]]\nname = \"a\"\nasm = \"SYNC_WAIT64 d0, d2, eq\"\n", 3, 28,
     "bad condition 'eq' (expected le or gt)"},
    {"AsmSymbolOffsetOutsideBo",
     "[[client]]\nname=\"c\"\n[[vm]]\nname=\"v\"\nclient=\"c\"\n[[bo]]\nname=\"b\"\nvm=\"v\"\nsize=4096\n"
     "[[job]]\nname = \"a\"\nasm = \"MOVE48 d0, @b+4096\"\n",
     12, 19, "bad offset 4096 in '@b+...' (expected @b+N with N < 4096)"},
    {"AsmDisasmSpellingBadModifier", "[[job]]\nname = \"a\"\nasm = \"\"\"\nNOP\nSYNC_WAIT64.eq [d0], d2\n\"\"\"\n", 5,
     12, "unknown modifier '.eq' of SYNC_WAIT64 (expected .le, .gt, .reject)"},
    {"AsmEmpty", "[[job]]\nname = \"a\"\nasm = \"\"\"\n# nothing\n\"\"\"\n", 3, 7, "has no instructions"},
    {"FaultUnknownKind", "[[fault]]\nkind = \"Meltdown\"\nat_us = 1\n", 2, 8,
     "unknown fault kind 'Meltdown' (expected one of: GlbAckDrop"},
    {"FaultNoTrigger", "[[fault]]\nkind = \"FwHang\"\n", 1, 1, "has 0 triggers"},
    {"FaultProbabilityAboveOne", "[[fault]]\nkind = \"ShaderHang\"\nprobability = 1.5\n", 3, 15, "above 1"},
    {"FaultCsgOutOfRange", "[[fault]]\nkind = \"CsgAckDrop\"\nalways = true\ncsg = 8\n", 4, 7,
     "expected an integer in -1..7"},
    {"FenceStateUnknown",
     "[[submit]]\ngroup = \"g\"\nqueue = \"q\"\njob = \"j\"\nat_us = 0\nfence = \"f\"\n[expect]\nfences = { f = "
     "\"done\" }\n",
     8, 16, "unknown fence state 'done'"},
    {"GroupFlagUnknown", "[expect]\ngroups = { g = [\"dead\"] }\n", 2, 17, "bad group state flag"},
    {"LatencyWithoutBound", "[[expect.latency]]\ngroup = \"g\"\n", 1, 1, "has no bound"},
    {"DurationZero", "[scenario]\nduration_us = 0\n", 2, 15, "out of range"},
};

INSTANTIATE_TEST_SUITE_P(Table, ScenarioDiagnostic, ::testing::ValuesIn(kDiagRows),
                         [](const ::testing::TestParamInfo<DiagRow>& info) { return std::string(info.param.name); });

}  // namespace
