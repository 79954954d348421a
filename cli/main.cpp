// syncoll: synthesize, verify, simulate and draw GPU collective algorithms.
#include "cli/cli_support.h"
#include "cli/commands.h"

#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

int main(int argc, char **argv) {
  using namespace syncoll::cli;
  CLI::App app{"syncoll: a verification-first simulator, model checker and synthesizer for GPU "
               "collective communication"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "syncoll 0.1.0");
  RunResult result;
  add_topo_commands(app, result);
  add_algo_commands(app, result);
  add_ir_commands(app, result);
  add_verify_command(app, result);
  add_simulate_command(app, result);
  add_compare_command(app, result);
  add_tune_command(app, result);
  add_synth_commands(app, result);
  add_lower_command(app, result);
  add_dot_command(app, result);
  add_demo_command(app, result);
  add_run_command(app, result);
  add_compose_command(app, result);
  add_study_command(app, result);
  add_check_command(app, result);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    // One line, like every other bad input: what is wrong, and where to read more.
    std::cerr << "syncoll: " << e.what() << " (see --help)\n";
    return kBadInput;
  }
  return result.exit_code;
}
