#include "tests/mscclpp/plan_campaign.h"

#include "examples/programs/programs.h"
#include "lowering/compile.h"
#include "model/collective_traits.h"
#include "model/invariant.h"
#include "mscclpp/mscclpp.h"
#include "testing/programs.h"
#include "tests/mscclpp/plan_oracle.h"
#include "verifier/verify.h"

#include <algorithm>
#include <filesystem>
#include <fmt/format.h>
#include <functional>
#include <map>

namespace syncoll::testing {
namespace {

using namespace mscclpp;

// Every operation of a plan by its place: (GPU, thread block, op, body op or -1).
struct OpPlace {
  int gpu = 0, tb = 0, op = 0, body = -1;
  std::string where() const {
    return body < 0 ? fmt::format("GPU {} tb {} op {}", gpu, tb, op)
                    : fmt::format("GPU {} tb {} op {}.{}", gpu, tb, op, body);
  }
};

std::vector<PlanOp> &ops_of(ExecutionPlan &plan, const OpPlace &p) {
  std::vector<PlanOp> &top = plan.gpus[size_t(p.gpu)].threadblocks[size_t(p.tb)].ops;
  return p.body < 0 ? top : top[size_t(p.op)].ops;
}

std::vector<OpPlace> places(const ExecutionPlan &plan) {
  std::vector<OpPlace> out;
  for (size_t g = 0; g < plan.gpus.size(); ++g)
    for (size_t t = 0; t < plan.gpus[g].threadblocks.size(); ++t) {
      const std::vector<PlanOp> &ops = plan.gpus[g].threadblocks[t].ops;
      for (size_t k = 0; k < ops.size(); ++k) {
        out.push_back({int(g), int(t), int(k)});
        for (size_t j = 0; j < ops[k].ops.size(); ++j)
          out.push_back({int(g), int(t), int(k), int(j)});
      }
    }
  return out;
}

// One fault kind: for each operation, a mutation returning false where it does not apply.
using Mutation =
    std::function<bool(ExecutionPlan &, std::vector<PlanOp> &, size_t, const OpPlace &)>;

void each_op(const ExecutionPlan &plan, std::vector<PlanMutant> &out, const std::string &fault,
             const Mutation &mutate) {
  for (const OpPlace &p : places(plan)) {
    ExecutionPlan copy = plan;
    std::vector<PlanOp> &ops = ops_of(copy, p);
    const size_t k = size_t(p.body < 0 ? p.op : p.body);
    if (mutate(copy, ops, k, p))
      out.push_back({fault, p.where(), std::move(copy)});
  }
}

bool is_signal(OpKind k) {
  return k == OpKind::Signal || k == OpKind::RelaxedSignal;
}

bool drop_if(std::vector<PlanOp> &ops, size_t k, const std::function<bool(OpKind)> &which) {
  if (!which(ops[k].kind))
    return false;
  ops.erase(ops.begin() + long(k));
  return true;
}

// The thread block's channels of the op's kind, as many as it has.
int channels_of(const ExecutionPlan &plan, const OpPlace &p, ChannelKind kind) {
  int n = 0;
  for (const ThreadBlockChannels &c : plan.gpus[size_t(p.gpu)].threadblocks[size_t(p.tb)].channels)
    if (c.kind == kind)
      n += int(c.ids.size());
  return n;
}

} // namespace

std::vector<PlanMutant> plan_mutants(const ExecutionPlan &plan) {
  std::vector<PlanMutant> out;
  each_op(plan, out, "drop signal",
          [](ExecutionPlan &, std::vector<PlanOp> &ops, size_t k, auto &) {
            if (ops[k].kind == OpKind::PutWithSignal) {
              ops[k].kind = OpKind::Put;
              return true;
            }
            return drop_if(ops, k, is_signal);
          });
  each_op(plan, out, "drop wait", [](ExecutionPlan &, std::vector<PlanOp> &ops, size_t k, auto &) {
    return drop_if(ops, k, [](OpKind o) { return o == OpKind::Wait || o == OpKind::RelaxedWait; });
  });
  each_op(plan, out, "drop flush", [](ExecutionPlan &, std::vector<PlanOp> &ops, size_t k, auto &) {
    if (ops[k].kind == OpKind::PutWithSignalAndFlush) {
      ops[k].kind = OpKind::PutWithSignal;
      return true;
    }
    return drop_if(ops, k, [](OpKind o) { return o == OpKind::Flush; });
  });
  each_op(plan, out, "drop barrier",
          [](ExecutionPlan &, std::vector<PlanOp> &ops, size_t k, auto &) {
            return drop_if(ops, k, [](OpKind o) { return o == OpKind::Barrier; });
          });
  each_op(plan, out, "drop semaphore op",
          [](ExecutionPlan &, std::vector<PlanOp> &ops, size_t k, auto &) {
            return drop_if(ops, k, [](OpKind o) {
              return o == OpKind::SemAcquire || o == OpKind::SemRelease;
            });
          });
  each_op(plan, out, "drop data op",
          [](ExecutionPlan &, std::vector<PlanOp> &ops, size_t k, auto &) {
            return drop_if(ops, k, [](OpKind o) {
              return o != OpKind::Pipeline && o != OpKind::Nop && o != OpKind::Signal &&
                     o != OpKind::RelaxedSignal && o != OpKind::Wait && o != OpKind::RelaxedWait &&
                     o != OpKind::Flush && o != OpKind::Barrier && o != OpKind::SemAcquire &&
                     o != OpKind::SemRelease;
            });
          });
  each_op(plan, out, "relax signal",
          [](ExecutionPlan &, std::vector<PlanOp> &ops, size_t k, auto &) {
            if (ops[k].kind != OpKind::Signal || ops[k].channel_kind != ChannelKind::Memory)
              return false;
            ops[k].kind = OpKind::RelaxedSignal;
            return true;
          });
  each_op(plan, out, "relax wait", [](ExecutionPlan &, std::vector<PlanOp> &ops, size_t k, auto &) {
    if (ops[k].kind != OpKind::Wait || ops[k].channel_kind != ChannelKind::Memory)
      return false;
    ops[k].kind = OpKind::RelaxedWait;
    return true;
  });
  each_op(plan, out, "swap adjacent ops",
          [](ExecutionPlan &, std::vector<PlanOp> &ops, size_t k, auto &) {
            if (k + 1 >= ops.size() || ops[k].kind == ops[k + 1].kind)
              return false;
            std::swap(ops[k], ops[k + 1]);
            return true;
          });
  // A slice one chunk off: the wrong chunk, or a scratch slot another message uses.
  for (const int delta : {1, -1})
    each_op(plan, out, "wrong chunk",
            [delta](ExecutionPlan &, std::vector<PlanOp> &ops, size_t k, auto &) {
              for (auto *list : {&ops[k].dst, &ops[k].src})
                if (!list->empty() && list->front().index + delta >= 0) {
                  list->front().index += delta;
                  return true;
                }
              return false;
            });
  each_op(
      plan, out, "wrong buffer", [](ExecutionPlan &, std::vector<PlanOp> &ops, size_t k, auto &) {
        for (auto *list : {&ops[k].src, &ops[k].dst})
          for (BufferSlice &s : *list)
            if (s.local) {
              s.local = *s.local == PlanBuffer::Scratch ? PlanBuffer::Output : PlanBuffer::Scratch;
              return true;
            }
        return false;
      });
  each_op(plan, out, "wrong peer",
          [](ExecutionPlan &mutant, std::vector<PlanOp> &ops, size_t k, const OpPlace &p) {
            PlanOp &op = ops[k];
            if (op.channels.empty() || op.channel_kind == ChannelKind::Switch)
              return false;
            const int n = channels_of(mutant, p, op.channel_kind);
            if (n < 2)
              return false;
            op.channels.front() = (op.channels.front() + 1) % n;
            return true;
          });
  each_op(plan, out, "drop reduce source",
          [](ExecutionPlan &, std::vector<PlanOp> &ops, size_t k, auto &) {
            if (!op_traits(ops[k].kind).reduces || ops[k].src.size() < 2)
              return false;
            ops[k].src.pop_back();
            return true;
          });
  for (PlanMutant &m : out)
    m.renames = m.fault == "wrong chunk" || m.fault == "wrong buffer" || m.fault == "wrong peer";
  return out;
}

// Every subject is the project's own and correct: one that does not read, verify or lower is
// our bug, stopped here rather than left out of the campaign.
std::vector<PlanSubject> plan_subjects(const std::string &source_dir) {
  std::vector<PlanSubject> out;
  for (const char *dir : {"/tests/data/mscclpp", "/examples/mscclpp"}) {
    std::vector<std::filesystem::path> files;
    for (const auto &e : std::filesystem::directory_iterator(source_dir + dir))
      if (e.path().extension() == ".json")
        files.push_back(e.path());
    std::sort(files.begin(), files.end());
    for (const auto &f : files) {
      auto plan = read_execution_plan_file(f.string());
      SYNCOLL_INVARIANT(plan.has_value(), "a plan of the correct corpus reads");
      out.push_back({f.filename().string(), std::move(*plan)});
    }
  }
  auto lowered = [&](std::string name, const verifier::VerifiedProgram &verified,
                     int gpus_per_node) {
    auto plan = plan_from_program(verified, gpus_per_node);
    SYNCOLL_INVARIANT(plan.has_value(), "a campaign program lowers to a plan");
    out.push_back({std::move(name), std::move(*plan)});
  };
  for (const auto &[name, program] :
       {std::pair{"lowered ring allgather (4)", ring_allgather_program(4, 1)},
        std::pair{"lowered ring allreduce (4)", ring_allreduce_program(4, 1)},
        std::pair{"lowered all-pairs allreduce (3)", allpairs_allreduce_program(3)},
        std::pair{"lowered recursive doubling allgather (4)",
                  recursive_doubling_allgather_program(4)},
        std::pair{"lowered two-step alltoall (2x2)", two_step_alltoall_program(2, 2)}}) {
    verifier::VerifyOptions options;
    options.collective = *collective_for_program(program, std::nullopt);
    auto verified = verifier::certify(program, options);
    SYNCOLL_INVARIANT(verified.has_value(), "a campaign program verifies");
    lowered(name, *verified, 0);
  }
  // DSL examples across two nodes: port channels (pwsf, wait) between them.
  for (const char *name : {"hierarchical_allreduce", "two_step_alltoall"}) {
    examples::ExampleParams params;
    params.ranks = 4;
    params.nodes = 2;
    auto dsl = examples::find_program_example(name)->build(params);
    SYNCOLL_INVARIANT(dsl.has_value(), "a DSL example builds");
    auto program = lowering::lower(*dsl);
    SYNCOLL_INVARIANT(program && program->verified, "a DSL example lowers and verifies");
    lowered(fmt::format("lowered {} (2 nodes x 2, port)", name), *program->verified,
            dsl->topology().ranks_per_node());
  }
  return out;
}

PlanCampaignResult run_plan_campaign(const std::vector<PlanSubject> &subjects, int schedules,
                                     uint64_t seed, int stride) {
  int index = 0;
  PlanCampaignResult result;
  for (const PlanSubject &s : subjects) {
    const PlanReport correct = verify_plan(s.plan);
    const PlanOracleVerdict correct_oracle = run_plan_oracle(s.plan, schedules, seed);
    if (!correct.all_hold())
      result.correct_plan_failures.push_back(s.name + ": the verifier flags it");
    if (correct_oracle.misbehaves)
      result.correct_plan_failures.push_back(s.name + ": the oracle: " + correct_oracle.how);
    std::map<std::string, PlanCampaignRow> rows;
    std::vector<std::string> order;
    for (const PlanMutant &m : plan_mutants(s.plan)) {
      if (index++ % stride != 0)
        continue;
      if (!rows.count(m.fault))
        order.push_back(m.fault);
      PlanCampaignRow &row = rows[m.fault];
      row.plan = s.name, row.fault = m.fault;
      ++row.mutants;
      // Written and read back: what MSCCL++'s executor would be handed.
      auto read = m.renames ? read_execution_plan(execution_plan_json(m.plan), "mutant.json")
                            : Expected<ExecutionPlan>(m.plan);
      if (!read) {
        ++row.rejected_by_reader;
        continue;
      }
      const PlanReport report = verify_plan(*read);
      const bool flagged = !report.all_hold();
      const PlanOracleVerdict oracle = run_plan_oracle(*read, schedules, seed);
      row.caught_by_verifier += flagged ? 1 : 0;
      row.behaviour_changing += oracle.misbehaves ? 1 : 0;
      if (oracle.misbehaves && !flagged) {
        ++row.missed;
        row.missed_examples.push_back(m.where + ": " + oracle.how);
      }
      row.equivalent += !oracle.misbehaves && !flagged ? 1 : 0;
      if (!oracle.misbehaves && flagged) {
        ++row.flagged_unseen;
        for (const PlanVerdict &v : report.verdicts)
          if (v.kind != verifier::VerdictKind::Holds) {
            row.unseen_examples.push_back(m.where + ": " + v.summary);
            break;
          }
      }
    }
    for (const std::string &f : order)
      result.rows.push_back(std::move(rows[f]));
  }
  return result;
}

} // namespace syncoll::testing
