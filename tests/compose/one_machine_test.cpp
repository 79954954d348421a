// One machine per system: the time the plan search reports for a composed plan (what `syncoll
// compose` prints) is the time its written XML takes when read back and simulated on the system
// as every command runs programs there (what `syncoll simulate PLAN.xml --system` prints), for
// random machines, collectives, plans and sizes (property).
#include "compose/composition.h"
#include "compose/factorize.h"
#include "compose/search.h"
#include "lowering/compile.h"
#include "model/collective_traits.h"
#include "model/hardware.h"
#include "model/mscclir.h"
#include "simulator/program_sim.h"
#include "simulator/system_model.h"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace syncoll::compose {
namespace {

// The time of `xml` read back and run as `syncoll simulate XML --system` runs a program.
double simulated_from_file_us(const std::string &xml, const simulator::SystemModel &system,
                              int64_t bytes) {
  auto parsed = parse_program(xml, "plan.xml");
  RC_ASSERT(parsed.has_value());
  simulator::ProgramSimOptions o;
  o.size_bytes = bytes;
  o.model = system.interpreted();
  auto sim = simulator::simulate_program(parsed->value, system.program_topology(), o);
  RC_ASSERT(sim.has_value());
  RC_ASSERT(!sim->deadlocked);
  return double(sim->result.completion) / 1e6;
}

RC_GTEST_PROP(OneMachineProperty, ComposedTimeIsTheWrittenProgramsTimeOnTheSystem, ()) {
  const std::string preset_name =
      *rc::gen::elementOf(std::vector<std::string>{"dgx_h100", "dgx_a100", "aws_p4de"});
  const SystemPreset *preset = find_system_preset(preset_name);
  RC_ASSERT(preset != nullptr);
  const int nodes = *rc::gen::inRange(1, 4);
  const int gpus = *rc::gen::elementOf(std::vector<int>{2, 4});
  auto system = simulator::make_system_model(*preset, nodes, gpus);
  RC_ASSERT(system.has_value());
  const CollectiveKind kind = *rc::gen::elementOf(
      std::vector<CollectiveKind>{CollectiveKind::Allgather, CollectiveKind::Allreduce,
                                  CollectiveKind::Broadcast, CollectiveKind::ReduceScatter});
  const int ranks = system->topology.num_ranks();
  const std::optional<int> root = collective_traits(kind).rooted ? std::optional(0) : std::nullopt;
  const int factor = kind == CollectiveKind::Allreduce ? ranks : 1;
  auto composition = Composition::standard(kind, ranks, factor, root);
  auto spec = make_collective(kind, ranks, factor, root);
  RC_ASSERT(composition.has_value() && spec.has_value());
  const std::vector<Hierarchy> plans = candidates(nodes, gpus, preset->nics_per_node);
  const Hierarchy plan = *rc::gen::elementOf(plans);
  const int64_t bytes = *rc::gen::elementOf(std::vector<int64_t>{64 << 10, 1 << 20, 16 << 20});
  RC_TAG(preset_name, collective_kind_name(kind));

  auto found = search(*composition, *spec, *system, {bytes}, {plan});
  RC_ASSERT(found.has_value());
  const Tried &tried = found->front().tried.front();
  RC_PRE(tried.us.has_value()); // a plan that does not verify is not written

  auto factorized = factorize(*composition, *spec, plan, system->topology);
  RC_ASSERT(factorized.has_value());
  auto lowered = lowering::lower(factorized->program);
  RC_ASSERT(lowered.has_value());
  RC_ASSERT(lowered->verified.has_value());
  const std::string xml = lowering::write_deployment_xml(*lowered->verified);
  RC_ASSERT(simulated_from_file_us(xml, *system, bytes) == *tried.us);
}

} // namespace
} // namespace syncoll::compose
