// Where the worker program is: one rule for the GUI, the CLI and the headless runner.
#pragma once

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

}  // namespace tunebench::launch
