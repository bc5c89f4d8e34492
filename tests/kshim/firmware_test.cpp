// request_firmware: images come from the search path; a missing one names the path it tried.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kernel_shim/fault_inject.h"
#include "kernel_shim/firmware.h"
#include "kernel_shim/log.h"
#include "tests/support/kernel_test.h"

using namespace kshim;
namespace fs = std::filesystem;

class Firmware : public kshim::testing::KernelTest {
protected:
    void SetUp() override {
        KernelTest::SetUp();
        dir_ = fs::temp_directory_path() / ("kshim_fw_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::create_directories(dir_ / "arm/mali/arch10.8");
        image_ = {0x43, 0x53, 0x46, 0x46, 0x00, 0xff, 0x10, 0x20};
        std::ofstream(dir_ / "arm/mali/arch10.8/mali_csffw.bin", std::ios::binary)
            .write(reinterpret_cast<const char*>(image_.data()), static_cast<std::streamsize>(image_.size()));
        firmware_set_search_path(dir_.string());
    }
    void TearDown() override {
        firmware_set_search_path("");
        fs::remove_all(dir_);
        KernelTest::TearDown();
    }

    Device dev_{"fw.test"};
    fs::path dir_;
    std::vector<u8> image_;
};

TEST_F(Firmware, LoadsTheImageFromTheSearchPath) {
    const firmware* fw = nullptr;
    ASSERT_EQ(request_firmware(&fw, "arm/mali/arch10.8/mali_csffw.bin", &dev_), 0);
    ASSERT_NE(fw, nullptr);
    ASSERT_EQ(fw->size, image_.size());
    EXPECT_EQ(std::vector<u8>(fw->data, fw->data + fw->size), image_);
    release_firmware(fw);
    release_firmware(nullptr);  // a no-op, as upstream
}

TEST_F(Firmware, MissingImageIsEnoentWithThePathInTheLog) {
    const firmware* fw = reinterpret_cast<const firmware*>(0x1);
    EXPECT_EQ(request_firmware(&fw, "arm/mali/arch10.9/mali_csffw.bin", &dev_), -ENOENT);
    EXPECT_EQ(fw, nullptr);
    const std::string path = (dir_ / "arm/mali/arch10.9/mali_csffw.bin").string();
    EXPECT_TRUE(
        log_contains("Direct firmware load for arm/mali/arch10.9/mali_csffw.bin failed with error -2", LogLevel::Err));
    EXPECT_TRUE(log_contains("(path: " + path + ")", LogLevel::Err));
    // A directory is not an image.
    EXPECT_EQ(request_firmware(&fw, "arm/mali", &dev_), -ENOENT);
}

TEST_F(Firmware, SearchPathOverrideAndDefault) {
    EXPECT_EQ(firmware_search_path(), dir_.string());
    firmware_set_search_path(dir_.string() + "/arm/mali");
    const firmware* fw = nullptr;
    ASSERT_EQ(request_firmware(&fw, "arch10.8/mali_csffw.bin", &dev_), 0);
    release_firmware(fw);

    // Empty: back to the default, UPANTHOR_FIRMWARE_PATH if set, else the build's folder.
    const char* saved = std::getenv("UPANTHOR_FIRMWARE_PATH");
    const std::string saved_value = saved ? saved : "";
    ::setenv("UPANTHOR_FIRMWARE_PATH", dir_.c_str(), 1);
    firmware_set_search_path("");
    EXPECT_EQ(firmware_search_path(), dir_.string());
    ASSERT_EQ(request_firmware(&fw, "arm/mali/arch10.8/mali_csffw.bin", &dev_), 0);
    release_firmware(fw);
    ::unsetenv("UPANTHOR_FIRMWARE_PATH");
    const std::string def = firmware_search_path();
    EXPECT_EQ(fs::path(def).filename(), "firmware");
    if (saved)
        ::setenv("UPANTHOR_FIRMWARE_PATH", saved_value.c_str(), 1);
}

TEST_F(Firmware, AllocationFailureIsEnomemAndLeaksNothing) {
    for (u64 nth = 1; nth <= 2; nth++) {
        fault_inject_arm({.fail_nth = nth, .only_cache = "kmalloc"});
        const firmware* fw = nullptr;
        EXPECT_EQ(request_firmware(&fw, "arm/mali/arch10.8/mali_csffw.bin", &dev_), -ENOMEM) << nth;
        EXPECT_EQ(fw, nullptr);
        fault_inject_disarm();
    }
}
