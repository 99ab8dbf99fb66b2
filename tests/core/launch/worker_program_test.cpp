// Where the programs a launch runs are: the interpreter for a script (find_python's search and
// known_python) and tunebench_probe's folder. Real interpreters: /usr/bin/python3 with Debian's
// python3-torch (skipped without it) and ones that are not there or cannot import torch.
#include "core/launch/worker_program.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace tl = tunebench::launch;

namespace {
bool usr_python_has_torch() { return std::system("/usr/bin/python3 -c 'import torch' >/dev/null 2>&1") == 0; }
}  // namespace

// Named: checked, never replaced by another. Not named: $TUNEBENCH_PYTHON, then python3 on PATH,
// then /usr/bin/python3, the first that imports torch; what was tried is said when none does.
TEST(FindPython, TheSearchTakesTheFirstCandidateThatImportsTorch) {
  if (!usr_python_has_torch()) GTEST_SKIP() << "/usr/bin/python3 cannot import torch (apt install python3-torch)";
  const auto empty = std::filesystem::temp_directory_path() / "tunebench-no-python-here";
  std::filesystem::create_directories(empty);
  const std::string path = std::getenv("PATH") ? std::getenv("PATH") : "";
  ::setenv("PATH", empty.c_str(), 1);  // no python3 on PATH
  ::setenv("TUNEBENCH_PYTHON", "/nonexistent/python3", 1);
  EXPECT_FALSE(tl::known_python().has_value()) << "not asked yet";
  const tl::PythonFound f = tl::find_python();
  ::setenv("PATH", path.c_str(), 1);
  ::unsetenv("TUNEBENCH_PYTHON");
  EXPECT_EQ(f.path, "/usr/bin/python3") << f.error;
  EXPECT_FALSE(f.torch_version.empty());
  ASSERT_TRUE(tl::known_python().has_value());
  EXPECT_EQ(tl::known_python()->path, "/usr/bin/python3");
  EXPECT_FALSE(tl::known_python("/usr/bin/python3").has_value()) << "a named interpreter is its own question";

  const tl::PythonFound named = tl::find_python("/nonexistent/python3");
  EXPECT_TRUE(named.path.empty());
  EXPECT_NE(named.error.find("/nonexistent/python3"), std::string::npos) << named.error;
}

TEST(FindPython, AnInterpreterWithoutTorchIsRefusedWithItsName) {
  // An interpreter that runs but cannot import torch: /bin/false stands for it (exits 1, says nothing).
  const tl::PythonFound f = tl::find_python("/bin/false");
  EXPECT_TRUE(f.path.empty());
  EXPECT_EQ(f.error.rfind("/bin/false: ", 0), 0u) << f.error;
}

// A program of this build tree runs the source's tunebench_probe; one elsewhere (an install) only
// its own PREFIX/share/tunebench/python, never the source's.
TEST(FindProbe, OnlyABuildTreeProgramFallsBackToTheSource) {
  ::unsetenv("TUNEBENCH_PROBE_PATH");
  const auto elsewhere = std::filesystem::temp_directory_path() / "tunebench-installed" / "bin";
  std::filesystem::create_directories(elsewhere);
  EXPECT_EQ(tl::find_probe(elsewhere.string()), "");
  EXPECT_NE(tl::probe_not_found_message(elsewhere.string()).find("tunebench-installed/share/tunebench/python"),
            std::string::npos);
  // This test runs from the build tree: the source's package.
  const std::string here = tl::find_probe();
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(here) / "tunebench_probe" / "__main__.py")) << here;
  // Given, it is taken as it is, or refused when it has no package.
  ::setenv("TUNEBENCH_PROBE_PATH", here.c_str(), 1);
  EXPECT_EQ(tl::find_probe(elsewhere.string()), here);
  ::setenv("TUNEBENCH_PROBE_PATH", elsewhere.c_str(), 1);
  EXPECT_EQ(tl::find_probe(), "");
  ::unsetenv("TUNEBENCH_PROBE_PATH");
}
