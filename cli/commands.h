// The `syncoll` subcommands. Each registers itself on the application and returns the exit code
// through the callback it installs.
#pragma once

#include <CLI/CLI.hpp>

namespace syncoll::cli {

/// Where a subcommand stores its exit code once it has run.
struct RunResult {
  int exit_code = 0;
};

void add_topo_commands(CLI::App &app, RunResult &result);
void add_algo_commands(CLI::App &app, RunResult &result);
void add_ir_commands(CLI::App &app, RunResult &result);
void add_demo_command(CLI::App &app, RunResult &result);
void add_verify_command(CLI::App &app, RunResult &result);
void add_simulate_command(CLI::App &app, RunResult &result);
void add_synth_commands(CLI::App &app, RunResult &result);
void add_lower_command(CLI::App &app, RunResult &result);
void add_dot_command(CLI::App &app, RunResult &result);
void add_run_command(CLI::App &app, RunResult &result);
void add_compose_command(CLI::App &app, RunResult &result);
void add_study_command(CLI::App &app, RunResult &result);
void add_check_command(CLI::App &app, RunResult &result);
void add_compare_command(CLI::App &app, RunResult &result);
void add_tune_command(CLI::App &app, RunResult &result);

} // namespace syncoll::cli
