// Unit tests of where a trace goes: the rank from the launcher's variables, the
// GPUMEMTRACE_OUTPUT template, and the directories created on the way.
#include "output_path.h"
#include "rank_info.h"
#include "temp_dir.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sys/stat.h>
#include <unistd.h>

using namespace gmt::preload;
namespace fs = std::filesystem;

namespace {

// Sets the given variables for the test's scope, clearing every launcher variable first.
class LauncherEnv {
  public:
    explicit LauncherEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
        for (const char* name : kAll) {
            unsetenv(name);
        }
        for (const auto& [name, value] : vars) {
            setenv(name, value, 1);
        }
    }
    ~LauncherEnv() {
        for (const char* name : kAll) {
            unsetenv(name);
        }
    }

  private:
    static constexpr const char* kAll[] = {"RANK",
                                           "LOCAL_RANK",
                                           "WORLD_SIZE",
                                           "OMPI_COMM_WORLD_RANK",
                                           "OMPI_COMM_WORLD_LOCAL_RANK",
                                           "OMPI_COMM_WORLD_SIZE",
                                           "PMI_RANK",
                                           "MPI_LOCALRANKID",
                                           "PMI_SIZE",
                                           "SLURM_PROCID",
                                           "SLURM_LOCALID",
                                           "SLURM_NTASKS",
                                           "GMT_TEST_VAR"};
};

} // namespace

TEST_CASE("the rank comes from the first launcher that set one") {
    SECTION("none") {
        LauncherEnv env({});
        RankInfo r = detectRank();
        CHECK(r.rank == -1);
        CHECK(r.local_rank == -1);
        CHECK(r.world_size == -1);
        CHECK(r.source.empty());
    }
    SECTION("torchrun inside an srun allocation: torchrun's") {
        LauncherEnv env({{"RANK", "5"},
                         {"LOCAL_RANK", "1"},
                         {"WORLD_SIZE", "8"},
                         {"SLURM_PROCID", "2"},
                         {"SLURM_LOCALID", "0"},
                         {"SLURM_NTASKS", "4"}});
        RankInfo r = detectRank();
        CHECK(r.rank == 5);
        CHECK(r.local_rank == 1);
        CHECK(r.world_size == 8);
        CHECK(r.source == "RANK");
    }
    SECTION("mpirun under Slurm: Open MPI's, with its own local rank and size") {
        LauncherEnv env({{"OMPI_COMM_WORLD_RANK", "3"},
                         {"OMPI_COMM_WORLD_LOCAL_RANK", "3"},
                         {"OMPI_COMM_WORLD_SIZE", "4"},
                         {"SLURM_PROCID", "0"},
                         {"SLURM_NTASKS", "1"}});
        RankInfo r = detectRank();
        CHECK(r.rank == 3);
        CHECK(r.world_size == 4);
        CHECK(r.source == "OMPI_COMM_WORLD_RANK");
    }
    SECTION("MPICH / Intel MPI") {
        LauncherEnv env({{"PMI_RANK", "7"}, {"PMI_SIZE", "16"}, {"MPI_LOCALRANKID", "3"}});
        RankInfo r = detectRank();
        CHECK(r.rank == 7);
        CHECK(r.local_rank == 3);
        CHECK(r.world_size == 16);
        CHECK(r.source == "PMI_RANK");
    }
    SECTION("srun alone") {
        LauncherEnv env({{"SLURM_PROCID", "12"}, {"SLURM_LOCALID", "4"}});
        RankInfo r = detectRank();
        CHECK(r.rank == 12);
        CHECK(r.local_rank == 4);
        CHECK(r.world_size == -1);
        CHECK(r.source == "SLURM_PROCID");
    }
    SECTION("LOCAL_RANK alone") {
        LauncherEnv env({{"LOCAL_RANK", "2"}});
        RankInfo r = detectRank();
        CHECK(r.rank == 2);
        CHECK(r.local_rank == 2);
        CHECK(r.source == "LOCAL_RANK");
    }
    SECTION("values that are not plain numbers are passed over") {
        LauncherEnv env({{"RANK", "-1"},
                         {"OMPI_COMM_WORLD_RANK", " 4"},
                         {"PMI_RANK", "1e3"},
                         {"SLURM_PROCID", "9999999999"},
                         {"LOCAL_RANK", "x"}});
        CHECK(detectRank().rank == -1);
    }
}

TEST_CASE("the output template expands pid, rank, host, variables and percent signs") {
    LauncherEnv env({{"GMT_TEST_VAR", "job-42"}});
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    CHECK(expandOutputTemplate("t.%p.gmtrace", {1234, -1}) == "t.1234.gmtrace");
    CHECK(expandOutputTemplate("rank%r.gmtrace", {1, 3}) == "rank3.gmtrace");
    CHECK(expandOutputTemplate("rank%r.gmtrace", {1, -1}) == "ranknorank.gmtrace");
    CHECK(expandOutputTemplate("%h/x", {1, 0}) == std::string(host) + "/x");
    CHECK(expandOutputTemplate("%q{GMT_TEST_VAR}/r%r", {1, 0}) == "job-42/r0");
    CHECK(expandOutputTemplate("[%q{GMT_NOT_SET_ANYWHERE}]", {1, 0}) == "[]");
    CHECK(expandOutputTemplate("%q{UNTERMINATED", {1, 0}) == "%q{UNTERMINATED");
    CHECK(expandOutputTemplate("100%%-%z-%", {1, 0}) == "100%-%z-%");
    CHECK(expandOutputTemplate("%t", {1, 0}).size() == 15); // YYYYmmdd-HHMMSS
}

TEST_CASE("missing directories are created on the way to the trace") {
    gmt::test::TempDir dir;
    std::string path = dir.file("a/b/c/t.gmtrace");
    REQUIRE(createParentDirectories(path));
    CHECK(fs::is_directory(dir.file("a/b/c")));
    CHECK_FALSE(fs::exists(path));                // only the directories
    REQUIRE(createParentDirectories(path));       // already there: fine
    CHECK(createParentDirectories("t.gmtrace"));  // the working directory
    CHECK(createParentDirectories("/t.gmtrace")); // the root
    CHECK(createParentDirectories(dir.file("a//b/./c/x.gmtrace")));
}

TEST_CASE("an existing symlinked directory is followed, a file in the way is not") {
    gmt::test::TempDir dir;
    fs::create_directory(dir.file("real"));
    fs::create_directory_symlink(dir.file("real"), dir.file("link"));
    REQUIRE(createParentDirectories(dir.file("link/new/t.gmtrace")));
    CHECK(fs::is_directory(dir.file("real/new")));

    std::ofstream(dir.file("plain")) << "a file";
    CHECK_FALSE(createParentDirectories(dir.file("plain/sub/t.gmtrace")));
    CHECK_FALSE(fs::exists(dir.file("plain/sub")));

    fs::create_directory(dir.file("locked"));
    chmod(dir.file("locked").c_str(), 0500);
    if (access(dir.file("locked").c_str(), W_OK) != 0) { // not when running as root
        CHECK_FALSE(createParentDirectories(dir.file("locked/sub/t.gmtrace")));
    }
    chmod(dir.file("locked").c_str(), 0700);
}
