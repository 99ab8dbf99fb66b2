// The subcommands of tunebench-cli. Each lives in its own file and registers itself on the app
// with one call from main.cpp; a subcommand reports failure by throwing (main prints the message
// and exits with 1), so the files hold only argument wiring and calls into core/.
#pragma once

namespace CLI {
class App;
}

#include <stdexcept>

namespace tunebench::cli {

// Thrown by a subcommand that ends with a specific exit status (run: the trial's); main returns it.
struct CommandExit {
  int code = 1;
};

// A configuration refused before anything ran: "tunebench-cli: <what>", exit status 2 (the
// worker's and the runners' code for an invalid configuration).
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void add_import_command(CLI::App& app);    // import SESSION LOG.jsonl | TRACE... [--name NAME] [--set k=v]
void add_settings_command(CLI::App& app);  // settings SESSION --trial ID [k=v]... [--forget KEY]
void add_export_command(CLI::App& app);  // export SESSION --trial ID --format F -o FILE
void add_list_command(CLI::App& app);    // list SESSION
void add_presets_command(CLI::App& app);   // presets [--json]
void add_predict_command(CLI::App& app);   // predict [--config F | --preset P] [--gpu G --gpus N --link L] [--json]
void add_accuracy_command(CLI::App& app);  // accuracy INPUTS... [--json]
void add_probe_command(CLI::App& app);       // probe --gpus N [--nccl-env K=V] [--session S]
void add_run_command(CLI::App& app);         // run SESSION (--preset P | --config F) [--set k=v] [--launcher ...] [--json]
void add_sweep_command(CLI::App& app);       // sweep SESSION ... --grid k=v1,v2 [--repeat N]
void add_investigate_command(CLI::App& app);  // investigate SESSION TRIAL [--budget N | --budget-minutes M]
void add_tune_command(CLI::App& app);         // tune SESSION --preset P [--per-gpu] --budget-minutes M [--out F]

}  // namespace tunebench::cli
