// NVML through dlopen against the fake libnvidia-ml built by the tests (tests/exec/fake_nvml.cpp):
// discovery (count, UUIDs, names, memory), utilization read again at each call, and the errors
// of a missing library and of a driver that does not initialise.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "astraeus/exec/nvml.hpp"

namespace {

std::string temp_file(const std::string& name) {
    return (std::filesystem::temp_directory_path() / (name + "-" + std::to_string(::getpid()))).string();
}

TEST(Nvml, DiscoversGpusAndReadsUtilization) {
    const std::string f = temp_file("fake-nvml");
    std::ofstream(f) << "GPU-aaaa H100 81559 37\nGPU-bbbb H100 81559 0\n";
    ::setenv("FAKE_NVML_FILE", f.c_str(), 1);
    auto n = astraeus::exec::Nvml::open(FAKE_NVML);
    ASSERT_TRUE(n) << n.error().message;
    const auto gpus = (*n)->gpus();
    ASSERT_EQ(gpus.size(), 2u);
    EXPECT_EQ(gpus[0].index, 0);
    EXPECT_EQ(gpus[0].uuid, "GPU-aaaa");
    EXPECT_EQ(gpus[1].uuid, "GPU-bbbb");
    EXPECT_EQ(gpus[1].name, "H100");
    EXPECT_EQ(gpus[0].memory_bytes, 81559ull << 20);
    EXPECT_EQ((*n)->utilization(), (std::vector<double>{37, 0}));
    std::ofstream(f) << "GPU-aaaa H100 81559 99\nGPU-bbbb H100 81559 4\n";
    EXPECT_EQ((*n)->utilization(), (std::vector<double>{99, 4}));
    n->reset();
    std::filesystem::remove(f);
    ::unsetenv("FAKE_NVML_FILE");
}

TEST(Nvml, ErrorsSayWhy) {
    auto missing = astraeus::exec::Nvml::open("/nonexistent/libnvidia-ml.so.1");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("cannot load /nonexistent/libnvidia-ml.so.1"), std::string::npos);
    ::unsetenv("FAKE_NVML_FILE");
    auto no_driver = astraeus::exec::Nvml::open(FAKE_NVML);
    ASSERT_FALSE(no_driver);
    EXPECT_NE(no_driver.error().message.find("nvmlInit_v2 failed: NVML Shared Library Not Found"), std::string::npos)
        << no_driver.error().message;
}

TEST(Nvml, LibraryFromTheEnvironment) {
    ::setenv("ASTRAEUS_NVML_LIBRARY", "/x/libfake.so", 1);
    EXPECT_EQ(astraeus::exec::nvml_library(), "/x/libfake.so");
    ::unsetenv("ASTRAEUS_NVML_LIBRARY");
    EXPECT_EQ(astraeus::exec::nvml_library(), "libnvidia-ml.so.1");
}

}  // namespace
