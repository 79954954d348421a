// Verification results: one verdict per property, each a value (holds, violated with a
// counterexample a person can read, or unknown), never an exception (docs/architecture.md,
// "Verification").
#pragma once

#include "model/ids.h"
#include "model/program.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace syncoll::verifier {

enum class Property { Structure, Resources, DeadlockFreedom, RaceFreedom, Postcondition };
enum class VerdictKind { Holds, Violated, Unknown };
enum class RaceMode { Strict, Relaxed };

/// One step of one thread block, in one pipeline iteration.
struct StepRef {
  RankId rank;
  TbId tb;
  int step = 0;
  int iteration = 0;
  auto operator<=>(const StepRef &) const = default;
};

/// A rule of docs/semantics.md, "Structure", that the program breaks.
struct StructuralIssue {
  std::string code; ///< stable identifier, e.g. "conn-shared"
  std::string message;
  std::optional<StepRef> where;
};

/// What a blocked thread block waits for.
struct Wait {
  StepRef waiter;            ///< where it is stuck
  std::string reason;        ///< "receive on connection 1->0 ch 0 (empty)", ...
  std::optional<TbId> on_tb; ///< the thread block that would release it
  std::optional<RankId> on_rank;
};

struct DeadlockCounterexample {
  std::string regime;              ///< protocol, FIFO capacity, count splitting, iterations
  std::vector<Wait> cycle;         ///< the wait-for cycle, or the chain ending at a finished TB
  bool lost_wakeup = false;        ///< the chain ends at a thread block that finished
  std::vector<std::string> prefix; ///< how far each thread block got: the execution prefix
};

/// One access of a step to a range of one buffer on one rank.
struct Access {
  StepRef step;
  OpType op = OpType::Nop;
  BufferKind buffer = BufferKind::Input;
  int begin = 0; ///< first chunk
  int end = 0;   ///< one past the last chunk
  bool writes = false;
};

struct RaceCounterexample {
  std::string mode; ///< aliasing mode: "in-place" or "out-of-place"
  Access first;
  Access second;
  std::string why;
};

struct WrongSlot {
  RankId rank;
  int output_slot = 0;
  std::string expected;
  std::string found;
};

struct PostconditionCounterexample {
  std::string mode;
  std::vector<WrongSlot> slots;
};

using Counterexample =
    std::variant<std::monostate, std::vector<StructuralIssue>, DeadlockCounterexample,
                 std::vector<RaceCounterexample>, PostconditionCounterexample>;

struct Verdict {
  Property property;
  VerdictKind kind = VerdictKind::Holds;
  std::string summary;    ///< one line
  std::string decided_by; ///< "linear check", "model checker", ...
  Counterexample counterexample;
};

/// A count-splitting regime: transfers carry at most `max_chunks` chunks of a step, the first
/// message size (the executor's nBytes) at which it happens being `from_bytes`.
struct SplitRegime {
  int max_chunks = kMaxStepCount;
  int64_t from_bytes = 0;
  friend bool operator==(const SplitRegime &, const SplitRegime &) = default;
};

/// Which message sizes the verdicts cover: the window (executor's nBytes), where it comes from,
/// and every count-splitting regime a size in it reaches (none: no size in the window).
struct Coverage {
  int64_t min_bytes = 0;
  std::optional<int64_t> max_bytes; ///< none: no upper limit
  std::string source;               ///< "the program's minBytes/maxBytes", "--sizes", ...
  int chunks_per_loop = 1;
  std::vector<SplitRegime> regimes;
  int largest_step_count = 1; ///< of the steps that send or receive, to name the regimes
  /// "small messages (one transfer per step) from 1024 B", ...
  std::string describe(const SplitRegime &regime) const;
};

struct Report {
  std::vector<Verdict> verdicts;
  Coverage coverage;

  bool all_hold() const;
  const Verdict &verdict(Property p) const;
  /// Human-readable: a line per property, then each counterexample.
  std::string to_text() const;
  nlohmann::ordered_json to_json() const;
};

std::string_view property_name(Property p);
std::string_view verdict_kind_name(VerdictKind k);
std::string describe(const StepRef &s);
std::string describe(const Access &a);

} // namespace syncoll::verifier
