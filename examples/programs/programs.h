// Example programs in the chunk DSL (GC3, sections 3 and 7), each a function that builds a
// DslProgram on its own topology. `syncoll lower --example NAME` and the example tests run them
// through the whole pipeline: lower, verify in every aliasing mode the program claims, simulate.
#pragma once

#include "lowering/dsl.h"
#include "model/diagnostics.h"

#include <functional>
#include <string>
#include <vector>

namespace syncoll::examples {

struct ExampleParams {
  int ranks = 8;
  int nodes = 2; ///< hierarchical ones: nodes x (ranks / nodes) GPUs
  /// The ring Allreduce spreads its one logical ring over this many channels, chunk i on
  /// channel i mod channels (gc3 7.1.1); the other examples let the scheduler choose.
  int channels = 1;
  lowering::DslOptions options;
};

struct ProgramExample {
  std::string name;
  std::string summary;
  /// The aliasing modes the program is written for (it is built once per mode).
  std::vector<bool> in_place_modes;
  /// Whether it is built on ExampleParams::nodes nodes (a hierarchical one); the others ignore
  /// nodes, so the commands refuse --nodes for them.
  bool takes_nodes = false;
  std::function<Expected<lowering::DslProgram>(const ExampleParams &)> build;
};

const std::vector<ProgramExample> &program_examples();
const ProgramExample *find_program_example(const std::string &name);
/// The examples' names, comma-separated, for messages that list them.
std::string program_example_names();
/// The example of that name; unknown names fail with the list of known ones.
[[nodiscard]] Expected<const ProgramExample *> require_program_example(const std::string &name);

} // namespace syncoll::examples
