// tunebench-cli: the workbench's core without widgets. main() only registers subcommands and
// turns errors into one line on stderr and exit status 1.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <exception>
#include <string>
#include <vector>
#include <iostream>

#include "app/cli/commands.h"
#include "app/cli/config_inputs.h"
#include "app/cli/report_command.h"

int main(int argc, char** argv) {
  CLI::App app{
      "Tunebench command line: import worker logs and torch.profiler traces, list, export, compare and diagnose "
      "trials, predict before running, run trials and sweeps headless (local, ssh, slurm)"};
  app.require_subcommand(1);
  tunebench::cli::add_import_command(app);
  tunebench::cli::add_settings_command(app);
  tunebench::cli::add_export_command(app);
  tunebench::cli::add_list_command(app);
  tunebench::cli::add_presets_command(app);
  tunebench::cli::add_report_command(app);
  tunebench::cli::add_predict_command(app);
  tunebench::cli::add_accuracy_command(app);
  tunebench::cli::add_probe_command(app);
  tunebench::cli::add_run_command(app);
  tunebench::cli::add_sweep_command(app);
  tunebench::cli::add_investigate_command(app);
  tunebench::cli::add_tune_command(app);
  // The script's arguments (after "--") are not the command line's: CLI11 sees what comes before.
  std::vector<std::string> args(argv + 1, argv + argc);
  if (const auto dashes = std::find(args.begin(), args.end(), "--"); dashes != args.end()) {
    tunebench::cli::set_trailing_arguments({dashes + 1, args.end()});
    args.erase(dashes, args.end());
  }
  std::reverse(args.begin(), args.end());  // CLI11's vector form wants them last first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const tunebench::cli::CommandExit& e) {
    return e.code;
  } catch (const tunebench::cli::ConfigError& e) {
    std::cerr << "tunebench-cli: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "tunebench-cli: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
