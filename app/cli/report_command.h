// `tunebench-cli report`: the comparison and diagnosis of trials, as text or JSON.
#pragma once

namespace CLI {
class App;
}

namespace tunebench::cli {

// Adds the `report` subcommand to `app`.
void add_report_command(CLI::App& app);

}  // namespace tunebench::cli
