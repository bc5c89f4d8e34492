// (no upstream counterpart) The layering of the tree (docs/conventions.md, Layers): the rules
// themselves, and every include of the repository checked against them.
#include <gtest/gtest.h>

#include "tests/layout/layering.h"

namespace upanthor::layout {
namespace {

bool allowed(std::string_view file, std::string_view include) {
    return check_file(file, "#include \"" + std::string(include) + "\"\n").empty();
}

TEST(Layering, LayersAreFoldersTheMostSpecificFirst) {
    EXPECT_EQ(layer_of("panthor/panthor_drv.cpp"), "panthor");
    EXPECT_EQ(layer_of("uapi/drm/panthor_drm.h"), "uapi");
    EXPECT_EQ(layer_of("drm/sched/sched_main.cpp"), "drm");
    EXPECT_EQ(layer_of("kernel_shim/dma-buf/sync_file.cpp"), "kernel_shim");
    EXPECT_EQ(layer_of("hw/csf/regs/gpu_regs.h"), "hw");
    EXPECT_EQ(layer_of("hw/jm/regs/job_regs.h"), "hw") << "every GPU family's contract is one layer";
    EXPECT_EQ(layer_of("docs/x.md"), "");
    EXPECT_EQ(layer_of("panthorx/y.h"), "") << "a folder name is matched whole";
}

TEST(Layering, TheForbiddenDirectionsTheIssueNames) {
    EXPECT_FALSE(allowed("panthor/panthor_gpu.cpp", "mock_hw/gpu.h")) << "a driver reaches its GPU through MMIO only";
    EXPECT_FALSE(allowed("mock_hw/gpu.cpp", "panthor/panthor_device.h"))
        << "the mock knows the contract, not the driver";
    EXPECT_FALSE(allowed("kernel_shim/wait.cpp", "drm/drm_file.h"));
    EXPECT_FALSE(allowed("drm/drm_file.cpp", "panthor/panthor_drv.h"));
    EXPECT_FALSE(allowed("fuzz/gpuvm_program.cpp", "tests/gpuvm/gpuvm_test.h"));
    EXPECT_FALSE(allowed("bench/cs_bench.cpp", "tests/support/kernel_test.h"));
    EXPECT_FALSE(allowed("tools/upanthor/main.cpp", "tests/x.h"));
    EXPECT_FALSE(allowed("hw/csf/fw_iface.h", "kernel_shim/types.h")) << "the contract depends on nothing";
    EXPECT_FALSE(allowed("umd/panthor_client.cpp", "drm/drm_file.h")) << "userspace sees the uAPI only";
    EXPECT_FALSE(allowed("drm/drm_gem.cpp", "host/machine.h")) << "a lower layer including a higher one";
    EXPECT_FALSE(allowed("host/machine.cpp", "testkit/csf_rig.h"));
    EXPECT_FALSE(allowed("panthor/panthor_gpu.cpp", "mock_jm/jm_gpu.h")) << "no driver sees either mock";
    EXPECT_FALSE(allowed("panfrost/panfrost_gpu.cpp", "mock_jm/jm_gpu.h")) << "no driver sees either mock";
    EXPECT_FALSE(allowed("panfrost/panfrost_gpu.cpp", "mock_hw/gpu_base.h"));
    EXPECT_FALSE(allowed("panfrost/panfrost_drv.cpp", "panthor/panthor_device.h")) << "drivers are independent";
    EXPECT_FALSE(allowed("mock_hw/mmu.cpp", "mock_jm/jm_gpu.h")) << "the chassis knows no family's model";
}

TEST(Layering, TheAllowedDirections) {
    EXPECT_TRUE(allowed("panthor/panthor_gpu.cpp", "hw/csf/regs/gpu_regs.h"));
    EXPECT_TRUE(allowed("mock_hw/gpu.cpp", "hw/csf/regs/gpu_regs.h"));
    EXPECT_TRUE(allowed("mock_jm/jm_gpu.cpp", "mock_hw/gpu_base.h")) << "the G52 is built on the shared chassis";
    EXPECT_TRUE(allowed("mock_jm/job_chain.cpp", "hw/jm/job_desc.h"));
    EXPECT_TRUE(allowed("hw/jm/regs/mmu_regs.h", "hw/csf/regs/mmu_regs.h")) << "the MMU block is shared";
    EXPECT_TRUE(allowed("panthor/panthor_drv.cpp", "uapi/drm/panthor_drm.h"));
    EXPECT_TRUE(allowed("umd/panthor_client.h", "uapi/drm/panthor_drm.h"));
    EXPECT_TRUE(allowed("kernel_shim/dma-buf/sync_file.cpp", "uapi/linux/sync_file.h"))
        << "the kernel implements the uAPI";
    EXPECT_TRUE(allowed("drm/drm_gem.cpp", "kernel_shim/slab.h"));
    EXPECT_TRUE(allowed("host/machine.cpp", "panthor/panthor_drv.h"));
    EXPECT_TRUE(allowed("host/gpu_models.cpp", "panfrost/panfrost_drv.h"));
    EXPECT_TRUE(allowed("panfrost/panfrost_gpu.cpp", "hw/jm/regs/gpu_regs.h"));
    EXPECT_TRUE(allowed("host/machine.cpp", "mock_hw/platform.h"));
    EXPECT_TRUE(allowed("fuzz/gpuvm_program.cpp", "testkit/gpuvm_harness.h"));
    EXPECT_TRUE(allowed("tests/panthor/probe_test.cpp", "mock_hw/gpu.h"));
    EXPECT_TRUE(allowed("panthor/panthor_gpu.cpp", "panthor_gpu.h")) << "a sibling by relative path";
    EXPECT_TRUE(allowed("panthor/panthor_gpu.cpp", "boost/intrusive/list.hpp")) << "not a project path";
}

TEST(Layering, RelativePathsAreResolvedAsTheCompilerWould) {
    EXPECT_FALSE(allowed("panthor/panthor_gpu.cpp", "../mock_hw/gpu.h"));
    EXPECT_FALSE(allowed("fuzz/x.cpp", "../tests/gpuvm/gpuvm_harness.h"));
    EXPECT_EQ(resolve_include("drm/sched/sched_main.cpp", "../drm_gem.h"), "drm/drm_gem.h");
    EXPECT_EQ(resolve_include("drm/sched/sched_main.cpp", "gpu_scheduler.h"), "drm/sched/gpu_scheduler.h");
    EXPECT_EQ(resolve_include("drm/x.cpp", "../../etc/passwd"), std::nullopt) << "outside the repository";
}

TEST(Layering, IncludeDirectivesAreFoundInEveryForm) {
    const std::string text =
        "// #include \"mock_hw/gpu.h\" in a comment is not an include\n"
        "#include \"drm/drm_gem.h\"\n"
        "  #  include <mock_hw/gpu.h>\n"
        "#include \"mock_hw/mmu.h\"  // trailing comment\n";
    const std::vector<Violation> v = check_file("panthor/x.cpp", text);
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0].line, 3);
    EXPECT_EQ(v[1].line, 4);
    EXPECT_EQ(to_string(v[1]), "panthor/x.cpp:4: #include \"mock_hw/mmu.h\": panthor may not include mock_hw");
}

TEST(Layout, EveryIncludeOfTheTreeFollowsTheLayers) {
    const std::vector<Violation> v = check_tree(UPANTHOR_SOURCE_DIR);
    std::string all;
    for (const Violation& x : v)
        all += to_string(x) + "\n";
    EXPECT_TRUE(v.empty()) << v.size() << " include(s) against the layering (docs/conventions.md, Layers):\n" << all;
}

}  // namespace
}  // namespace upanthor::layout
