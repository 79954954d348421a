// Algorithm: a k-synchronous schedule (SCCL, sections 3.1 and 3.3). S steps, step s spends r_s
// rounds, and every send moves one chunk over one link within a step. A send either copies the
// chunk (the destination's value becomes the source's) or reduces it into the destination (the
// destination's value becomes the combination of both), as in SCCL's combining algorithms.
#pragma once

#include "model/collective.h"
#include "model/diagnostics.h"
#include "model/ids.h"
#include "model/topology.h"

#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

namespace syncoll {

class JsonView; // model/json_document.h

enum class SendOp { Copy, Reduce };

struct Send {
  ChunkId chunk;
  RankId src;
  RankId dst;
  SendOp op = SendOp::Copy;
  auto operator<=>(const Send &) const = default;
};

struct AlgorithmStep {
  int rounds = 1;
  std::vector<Send> sends;
  friend bool operator==(const AlgorithmStep &, const AlgorithmStep &) = default;
};

/// Names the collective and topology an algorithm was made for, so a file can be checked without
/// repeating them on the command line.
struct AlgorithmTarget {
  std::string collective; ///< a collective kind name, or "custom"
  int ranks = 0;
  int chunk_factor = 1;
  std::optional<int> root;
  std::string topology; ///< a library name or file; informational
  friend bool operator==(const AlgorithmTarget &, const AlgorithmTarget &) = default;
};

struct Algorithm {
  std::string name;
  AlgorithmTarget target;
  std::vector<AlgorithmStep> steps;

  int num_steps() const { return static_cast<int>(steps.size()); }
  int total_rounds() const;
  size_t num_sends() const;
  friend bool operator==(const Algorithm &, const Algorithm &) = default;
};

/// Algorithm JSON (docs/formats.md). Steps must have at least one round; chunk and rank numbers
/// must not be negative (whether they exist is for check_algorithm to say).
[[nodiscard]] Expected<Algorithm> algorithm_from_json(const JsonView &root);
[[nodiscard]] Expected<Algorithm> read_algorithm_file(const std::string &path);
nlohmann::ordered_json algorithm_to_json(const Algorithm &algorithm);

/// What check_algorithm found wrong, one item per fault.
struct AlgorithmViolation {
  enum class Kind {
    OutOfRange,         ///< a chunk or rank the collective does not have
    MissingLink,        ///< a send between ranks with no link
    SourceLacksChunk,   ///< the source does not hold the chunk when the step starts
    ConflictingWrites,  ///< a copy into a (chunk, rank) that another send of the step also writes
    ReduceNotCombining, ///< a reduce of a chunk the collective does not reduce
    LinkBandwidth,      ///< more sends on a link than capacity x rounds
    RelationBandwidth,  ///< more sends in a bandwidth relation than capacity x rounds
    Postcondition,      ///< a post rank ends without the expected value
  };
  Kind kind;
  std::optional<int> step; ///< 0-based step; messages print it 1-based like SCCL
  std::string message;
};

struct AlgorithmCheck {
  std::vector<AlgorithmViolation> violations;
  bool holds() const { return violations.empty(); }
};

/// Independent checker (SCCL, section 3.3): runs the schedule step by step from the precondition,
/// with every send of a step reading the state from before the step. Checks that each send's
/// link exists and its source holds the chunk, that every link and bandwidth relation carries at
/// most capacity x r_s sends in step s, and that every post rank ends with exactly the expected
/// value (for reduced chunks, the multiset of every pre rank's contribution: a contribution
/// missing or counted twice is a violation). Kept small and obviously correct: synth/ relies on
/// it to certify its answers.
AlgorithmCheck check_algorithm(const Algorithm &algorithm, const Topology &topology,
                               const CollectiveSpec &collective);

} // namespace syncoll
