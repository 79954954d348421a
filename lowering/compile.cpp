// The driver: runs the passes of lowering/detail/passes.h in order, moves a flow to the next
// channel whenever ordering or thread-block assignment needs it, and certifies the result.
#include "lowering/compile.h"

#include "lowering/detail/passes.h"
#include "model/mscclir.h"

#include <fmt/format.h>

namespace syncoll::lowering {
namespace {

// Orders the instruction DAG and assigns thread blocks, moving flows to higher channels until
// both succeed; fails when the program's own hints clash or no channel below 32 is left.
Expected<detail::ThreadBlockPlans> schedule(const DslProgram &p, InstructionDag &dag) {
  detail::Flows flows = detail::build_flows(dag);
  detail::ThreadBlockPlans plans;
  for (;;) {
    std::optional<detail::Conflict> conflict = detail::order(dag, flows);
    if (!conflict)
      conflict = detail::assign_thread_blocks(dag, flows, p.topology().num_ranks(), plans);
    if (!conflict)
      return plans;
    if (conflict->by_hand)
      return fail({}, fmt::format("program '{}': {}", p.name(), conflict->why));
    if (flows.channel_by_hand[size_t(conflict->flow)])
      return fail({}, fmt::format("program '{}': {}; the channel was set by hand, so it "
                                  "cannot move",
                                  p.name(), conflict->why));
    if (++flows.channel[size_t(conflict->flow)] > kMaxChannelIndex - 1)
      return fail({}, fmt::format("program '{}': {}, and no channel below 32 is free", p.name(),
                                  conflict->why));
  }
}

} // namespace

Expected<Lowered> lower(const DslProgram &program, const LowerOptions &options) {
  if (options.instances < 1)
    return fail({}, fmt::format("instances must be at least 1, not {}", options.instances));
  const detail::Aliasing alias(program.collective(), program.options().in_place);
  ChunkDag chunk_dag = detail::trace_chunk_dag(program, alias);
  InstructionDag dag = detail::expand_instructions(program, alias);
  detail::fuse(alias, dag);
  SYNCOLL_TRY(plans, schedule(program, dag));
  const detail::Dependencies deps = detail::insert_dependencies(dag, plans);
  SYNCOLL_TRY(one, detail::emit_program(program, options, dag, plans, deps));
  Program result = std::move(one);
  CollectiveSpec collective = program.collective();
  if (options.instances > 1) {
    SYNCOLL_TRY(scaled, detail::replicate(result, collective, options.instances));
    result = std::move(scaled.first);
    collective = std::move(scaled.second);
  }
  verifier::VerifyOptions vo;
  vo.collective = collective;
  auto verified = verifier::certify(result, vo);
  return Lowered{std::move(chunk_dag), std::move(dag), std::move(result), std::move(collective),
                 std::move(verified)};
}

std::string write_deployment_xml(const verifier::VerifiedProgram &program) {
  return program_to_mscclir_xml(program.program());
}

} // namespace syncoll::lowering
