// Where the worker program is: one rule for the GUI, the CLI and the headless runner.
#pragma once

#include <optional>
#include <string>

namespace tunebench::launch {

// `explicit_path` if given, else $TUNEBENCH_WORKER, else tunebench-worker beside `program_dir`
// (an installed prefix), else `program_dir`/../worker/tunebench-worker (the build tree:
// build/app/{gui,cli} -> build/app/worker). Empty `program_dir`: the running executable's folder.
// A named path (argument or variable) is returned as it is; of the others the first executable
// one, else "" (the caller says where it looked).
std::string find_worker(const std::string& explicit_path = "", const std::string& program_dir = "");
// The sentence for a worker not found.
std::string worker_not_found_message(const std::string& program_dir = "");

// ---- your own script (docs/SCRIPTS.md) ----------------------------------------------------------

// The folder that holds tunebench_probe (the Python package that runs a script as a trial):
// $TUNEBENCH_PROBE_PATH, else PREFIX/share/tunebench/python beside an installed program
// (PREFIX/bin), else, for a program of this build tree, the source's (app/probe); an installed
// program never takes the source's. "" when none has the package.
std::string find_probe(const std::string& program_dir = "");
std::string probe_not_found_message(const std::string& program_dir = "");

// The interpreter for a script and the PyTorch it imports.
struct PythonFound {
  std::string path;           // empty: none found
  std::string torch_version;  // what `import torch` gave
  std::string error;          // what was tried, for the user
};
// `explicit_python` if given (checked), else $TUNEBENCH_PYTHON, else the first of python3 on PATH
// and /usr/bin/python3 that imports torch. Each candidate is asked once per process (importing
// torch takes a second or two).
PythonFound find_python(const std::string& explicit_python = "");
// What find_python(explicit_python) answered last in this process, without asking again (for the
// launch preview, on the GUI thread); nullopt when it has not been asked.
std::optional<PythonFound> known_python(const std::string& explicit_python = "");

}  // namespace tunebench::launch
