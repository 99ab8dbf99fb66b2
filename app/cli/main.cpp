// tunebench-cli: the workbench's core without widgets. main() only registers subcommands and
// turns errors into one line on stderr and exit status 1.
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "app/cli/commands.h"
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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const tunebench::cli::CommandExit& e) {
    return e.code;
  } catch (const std::exception& e) {
    std::cerr << "tunebench-cli: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
