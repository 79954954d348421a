#include "testing/mutate.h"

#include "model/invariant.h"
#include "verifier/verify.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <vector>

namespace syncoll::testing {
namespace {

// Where a step lives: rank, thread block and position.
struct StepAt {
  size_t rank = 0;
  size_t tb = 0;
  size_t step = 0;
};

using Edit = std::function<void(ProgramDraft &)>;

// Reorders one thread block's steps (`order[new] = old`), keeping `s` equal to the position and
// every dependency on a moved step pointing at its new place.
void reorder(ProgramDraft &d, size_t rank, size_t tb, const std::vector<size_t> &order) {
  RankProgram &rp = d.ranks[rank];
  std::vector<Instruction> old = rp.thread_blocks[tb].steps.to_vector();
  std::vector<int> new_index(old.size());
  std::vector<Instruction> steps;
  for (size_t k = 0; k < order.size(); ++k) {
    new_index[order[k]] = int(k);
    steps.push_back(old[order[k]]);
    steps.back().declared_index = int(k);
  }
  rp.thread_blocks[tb].steps = StepList(steps);
  const TbId moved = rp.thread_blocks[tb].id;
  for (ThreadBlock &other : rp.thread_blocks)
    other.steps.edit([&](std::vector<Instruction> &all) {
      for (Instruction &in : all)
        if (in.dependency && in.dependency->tb == moved &&
            in.dependency->step.index() < new_index.size())
          in.dependency->step = StepIndex(new_index[in.dependency->step.index()]);
    });
}

std::vector<StepAt> every_step(const ProgramDraft &d) {
  std::vector<StepAt> out;
  for (size_t r = 0; r < d.ranks.size(); ++r)
    for (size_t t = 0; t < d.ranks[r].thread_blocks.size(); ++t)
      for (size_t k = 0; k < d.ranks[r].thread_blocks[t].steps.size(); ++k)
        out.push_back({r, t, k});
  return out;
}

Instruction step_at(const ProgramDraft &d, const StepAt &at) {
  return d.ranks[at.rank].thread_blocks[at.tb].steps[at.step];
}

void edit_step(ProgramDraft &d, const StepAt &at, const std::function<void(Instruction &)> &f) {
  d.ranks[at.rank].thread_blocks[at.tb].steps.edit(
      [&](std::vector<Instruction> &steps) { f(steps[at.step]); });
}

std::vector<size_t> swapped(size_t n, size_t k) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(0));
  std::swap(order[k], order[k + 1]);
  return order;
}

std::vector<size_t> first_to_last(size_t n) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t(1));
  order.back() = 0;
  return order;
}

// Reorders the thread block `tb` of rank `rank`, or of every rank whose thread block `tb` has as
// many steps when `rank` is none: a symmetric program (a ring) deadlocks only when every rank
// makes the same mistake.
Edit reorder_edit(std::optional<size_t> rank, size_t tb, size_t n, std::vector<size_t> order) {
  return [rank, tb, n, order = std::move(order)](ProgramDraft &x) {
    for (size_t r = 0; r < x.ranks.size(); ++r)
      if ((!rank || *rank == r) && tb < x.ranks[r].thread_blocks.size() &&
          x.ranks[r].thread_blocks[tb].steps.size() == n)
        reorder(x, r, tb, order);
  };
}

std::vector<Edit> deadlock_edits(const ProgramDraft &d) {
  std::vector<Edit> out;
  for (std::optional<size_t> one_rank : {std::optional<size_t>(), std::optional<size_t>(0)})
    for (size_t r = 0; r < d.ranks.size(); ++r) {
      if (!one_rank && r > 0)
        break; // the every-rank edits are named by rank 0's thread blocks
      for (size_t t = 0; t < d.ranks[r].thread_blocks.size(); ++t) {
        const size_t n = d.ranks[r].thread_blocks[t].steps.size();
        const std::optional<size_t> rank = one_rank ? std::optional<size_t>(r) : std::nullopt;
        for (size_t k = 0; k + 1 < n; ++k)
          out.push_back(reorder_edit(rank, t, n, swapped(n, k)));
        if (n > 2) // the first step moved to the end: a sender that first waits to receive
          out.push_back(reorder_edit(rank, t, n, first_to_last(n)));
      }
    }
  return out;
}

std::vector<Edit> race_edits(const ProgramDraft &d) {
  std::vector<Edit> out;
  for (const StepAt &at : every_step(d))
    if (step_at(d, at).dependency)
      out.push_back([at](ProgramDraft &x) {
        edit_step(x, at, [](Instruction &in) { in.dependency.reset(); });
      });
  return out;
}

std::vector<Edit> wrong_result_edits(const ProgramDraft &d) {
  std::vector<Edit> out;
  for (const StepAt &at : every_step(d)) {
    const Instruction in = step_at(d, at);
    const RankProgram &rp = d.ranks[at.rank];
    for (bool source : {true, false}) {
      const BufferRef ref = source ? in.src : in.dst;
      const int chunks = rp.chunks(ref.buffer);
      const int count = std::max(1, in.count);
      if (ref.offset < 0 || chunks <= count)
        continue;
      // The next chunks after the step's, wrapping to the buffer's start.
      const int moved = ref.offset + count + count <= chunks ? ref.offset + count : 0;
      if (moved == ref.offset)
        continue;
      out.push_back([at, source, moved](ProgramDraft &x) {
        edit_step(x, at, [&](Instruction &step) { (source ? step.src : step.dst).offset = moved; });
      });
    }
  }
  return out;
}

verifier::Property property_of(Fault fault) {
  switch (fault) {
  case Fault::Deadlock:
    return verifier::Property::DeadlockFreedom;
  case Fault::Race:
    return verifier::Property::RaceFreedom;
  case Fault::WrongResult:
    return verifier::Property::Postcondition;
  }
  SYNCOLL_UNREACHABLE("fault");
}

bool shows_fault(const Program &p, const CollectiveSpec &collective, Fault fault) {
  verifier::VerifyOptions options;
  options.collective = collective;
  const verifier::Report report = verifier::verify(p, options);
  using verifier::Property;
  using verifier::VerdictKind;
  return report.verdict(Property::Structure).kind == VerdictKind::Holds &&
         report.verdict(Property::Resources).kind == VerdictKind::Holds &&
         report.verdict(property_of(fault)).kind == VerdictKind::Violated;
}

} // namespace

std::string_view fault_name(Fault fault) {
  switch (fault) {
  case Fault::Deadlock:
    return "deadlock";
  case Fault::Race:
    return "race";
  case Fault::WrongResult:
    return "wrong result";
  }
  SYNCOLL_UNREACHABLE("fault");
}

std::optional<Program> inject_fault(const Program &program, const CollectiveSpec &collective,
                                    Fault fault, size_t choice) {
  const ProgramDraft &draft = program.draft();
  std::vector<Edit> edits;
  switch (fault) {
  case Fault::Deadlock:
    edits = deadlock_edits(draft);
    break;
  case Fault::Race:
    edits = race_edits(draft);
    break;
  case Fault::WrongResult:
    edits = wrong_result_edits(draft);
    break;
  }
  for (size_t i = 0; i < edits.size(); ++i) {
    ProgramDraft mutant = draft;
    edits[(choice + i) % edits.size()](mutant);
    auto p = Program::create(std::move(mutant));
    if (p && shows_fault(*p, collective, fault))
      return *std::move(p);
  }
  return std::nullopt;
}

} // namespace syncoll::testing
