// Without libFuzzer (gcc builds, CI): runs a harness's LLVMFuzzerTestOneInput once on every file
// named on the command line (directories: every regular file inside), so the seeds and any
// crash files found while fuzzing stay regression tests. Exits 1 when nothing was replayed.
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

int replay_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  return 1;
}

int replay(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return 0;
  if (!S_ISDIR(st.st_mode)) return replay_file(path);
  int n = 0;
  if (DIR* d = opendir(path.c_str())) {
    while (dirent* e = readdir(d))
      if (e->d_name[0] != '.') n += replay(path + "/" + e->d_name);
    closedir(d);
  }
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  int n = 0;
  for (int i = 1; i < argc; ++i) n += replay(argv[i]);
  std::printf("replayed %d inputs\n", n);
  return n > 0 ? 0 : 1;
}
