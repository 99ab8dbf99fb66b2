// tunebench-cli: the workbench without widgets. Only argument wiring lives here.
#include <CLI/CLI.hpp>

#include "app/cli/report_command.h"

int main(int argc, char** argv) {
  CLI::App app{"Tunebench command line: compare and diagnose distributed training trials"};
  app.require_subcommand(1);
  tunebench::cli::add_report_command(app);
  CLI11_PARSE(app, argc, argv);
  return 0;
}
