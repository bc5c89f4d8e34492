// The README's client example, kept compiling and running: one stream stores a value, the
// client waits for its syncobj and reads it back. The README builds the in-process backend by
// name (`umd::DrmFileBackend backend(file)`); here the backend is the umd fixture's, which is that
// one, or under UPANTHOR_UMD_BACKEND=real a RealFdBackend over /dev/dri/renderD128 served by the
// preload library (tests/umd/umd_client_test.h): the same steps, over both.
#include <gtest/gtest.h>

#include "host/drm_file_backend.h"
#include "tests/panthor/panthor_test.h"
#include "tests/umd/umd_client_test.h"
#include "umd/cs_builder.h"
#include "umd/panthor_client.h"

namespace umd {
namespace {

class ReadmeExample : public testing::UmdClientTest {};

TEST_F(ReadmeExample, StoresAValueTheClientReadsBack) {
    umd::Backend& backend = this->backend();  // README: umd::DrmFileBackend backend(file);
    auto client = std::move(umd::PanthorClient::open(backend).value());
    u32 vm = client->vm_create().value().id;
    umd::Bo bo = client->bo_create(1 << 20).value();
    auto* cpu = static_cast<u8*>(client->bo_mmap(bo.handle, bo.size).value());
    ASSERT_TRUE(client->vm_map(vm, bo.handle, 0x1000000, bo.size).ok());
    umd::cs::Builder b(client->cs_config(), cpu, 0x1000000, 4096);  // write the stream in the BO
    b.move48(b.reg64(0), 0x1000000 + 0x10000);                      // ... the work: store 42 there
    b.move32(b.reg32(2), 42);
    b.store32(b.reg32(2), b.reg64(0));
    ASSERT_TRUE(b.finish().ok());
    u32 group = client->group_create({.vm_id = vm, .queues = {{}}}).value();
    u32 done = client->syncobj_create().value();
    ASSERT_TRUE(client
                    ->group_submit(
                        group, umd::QueueSubmit::of(0, b, client->latest_flush_id().value(), {umd::sync_signal(done)}))
                    .ok());
    ASSERT_TRUE(client->syncobj_wait(done, client->deadline_after(1'000'000'000)).ok());
    EXPECT_EQ(*reinterpret_cast<volatile u32*>(cpu + 0x10000), 42u);
    EXPECT_TRUE(client->group_destroy(group).ok());
    EXPECT_TRUE(client->munmap(cpu, bo.size).ok());
}

}  // namespace
}  // namespace umd
