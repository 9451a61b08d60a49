// check_output_dir (sim/report.hpp): a bad --out is found before a simulation, with the path and
// the reason, and a good one is left as it will be written (no probe file behind).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "astraeus/sim/report.hpp"

namespace astraeus {
namespace {

namespace fs = std::filesystem;

struct TempDir {
    fs::path path;
    TempDir() {
        std::string t = (fs::temp_directory_path() / "astraeus-outdir-XXXXXX").string();
        path = ::mkdtemp(t.data());
    }
    ~TempDir() {
        std::error_code ec;
        fs::permissions(path / "ro", fs::perms::owner_all, ec);
        fs::remove_all(path, ec);
    }
};

TEST(OutputDir, CreatesNestedDirectoriesAndLeavesThemEmpty) {
    TempDir t;
    const fs::path out = t.path / "a" / "b";
    const auto made = check_output_dir(out.string());
    ASSERT_TRUE(made.has_value());
    EXPECT_TRUE(*made);  // it created the folder (a failed run removes it again)
    EXPECT_TRUE(fs::is_directory(out));
    EXPECT_TRUE(fs::is_empty(out));  // the probe file is removed
}

TEST(OutputDir, AnExistingDirectoryKeepsItsFiles) {
    TempDir t;
    std::ofstream(t.path / "jobs.csv") << "x\n";
    const auto made = check_output_dir(t.path.string());
    ASSERT_TRUE(made.has_value());
    EXPECT_FALSE(*made);  // it was there: a failed run leaves it
    EXPECT_EQ(fs::file_size(t.path / "jobs.csv"), 2u);
    EXPECT_EQ(std::distance(fs::directory_iterator(t.path), fs::directory_iterator{}), 1);
}

TEST(OutputDir, APathUnderARegularFileIsAnErrorNamingIt) {
    TempDir t;
    std::ofstream(t.path / "file") << "x\n";
    const std::string out = (t.path / "file" / "out").string();
    auto r = check_output_dir(out);
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().message, out + ": cannot create output directory: Not a directory");
}

TEST(OutputDir, ADirectoryThisUserCannotWriteIsAnError) {
    if (::geteuid() == 0) GTEST_SKIP() << "root writes in a 0500 directory";
    TempDir t;
    const fs::path ro = t.path / "ro";
    fs::create_directory(ro);
    fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
    auto r = check_output_dir(ro.string());
    ASSERT_FALSE(r.has_value());
    EXPECT_EQ(r.error().message,
              ro.string() + ": cannot write in the output directory: Permission denied");
}

}  // namespace
}  // namespace astraeus
