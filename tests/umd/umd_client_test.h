// The fixture of the umd client tests: the panthor fixture's device and file, with a
// umd::PanthorClient opened on it through the in-process backend. Teardown closes the client
// (its mappings go, as at process exit) and checks that no mapping was left behind.
#pragma once
#include <memory>

#include "drm/drm_mmap.h"
#include "tests/panthor/panthor_test.h"
#include "umd/drm_file_backend.h"
#include "umd/panthor_client.h"

namespace umd::testing {

class UmdClientTest : public panthor::testing::PanthorTest {
protected:
    void SetUp() override {
        PanthorTest::SetUp();
        if (HasFatalFailure())
            return;
        mmaps_before_ = drm::drm_mmap_live();
        backend_ = std::make_unique<DrmFileBackend>(file);
        Result<std::unique_ptr<PanthorClient>> c = PanthorClient::open(*backend_);
        ASSERT_TRUE(c.ok()) << c.error();
        client_ = std::move(*c);
    }
    void TearDown() override {
        close_client();
        EXPECT_EQ(drm::drm_mmap_live(), mmaps_before_);
        PanthorTest::TearDown();
    }

    PanthorClient& c() { return *client_; }
    // What a process exit does to the client's side: its mappings go, then the fd is closed.
    void close_client() {
        client_.reset();
        backend_.reset();
    }

    std::unique_ptr<DrmFileBackend> backend_;
    std::unique_ptr<PanthorClient> client_;
    long mmaps_before_ = 0;
};

}  // namespace umd::testing
