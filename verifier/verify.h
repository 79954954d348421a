// verify(program, options) -> Report: structure, resources, deadlock freedom, race freedom and
// the postcondition, each a verdict with a counterexample (docs/architecture.md, "Verification").
// Nothing reaches a deployment XML or CUDA without a VerifiedProgram, which only this file can
// make.
#pragma once

#include "model/collective.h"
#include "model/collective_traits.h"
#include "model/diagnostics.h"
#include "model/program.h"
#include "verifier/report.h"
#include "verifier/structural.h"

#include <optional>

namespace syncoll::verifier {

/// Message sizes in the executor's terms: nBytes = count x type size x sizeMultiplier.
struct SizeWindow {
  int64_t min_bytes = 0;
  std::optional<int64_t> max_bytes; ///< none: no upper limit
};

struct VerifyOptions {
  /// The collective the program must implement; when absent it is read from the program's
  /// `coll`, `ngpus` and `nchunksperloop` (model/collective_traits.h, collective_for_program).
  std::optional<CollectiveSpec> collective;
  std::optional<int> root;          ///< root of rooted collectives when inferred (default 0)
  std::optional<Protocol> protocol; ///< check as if run with this protocol
  RaceMode race_mode = RaceMode::Strict;
  int iterations = 2; ///< pipeline iterations for deadlock checking (at least 2)
  /// Only these message sizes, within the program's own window (minBytes, maxBytes; maxBytes 0
  /// is no limit): the count-splitting regimes checked are the ones they reach.
  std::optional<SizeWindow> sizes;
  ResourceLimits limits;
  size_t model_check_states = 2'000'000;
  /// Also run the model checker where the linear check is sound, and fail loudly if they differ.
  bool cross_check = false;
  /// Run deadlock, race and postcondition checks on a program whose resources are already
  /// violated. Off, those three are unknown ("not checked"): a program the executor cannot hold
  /// is decided by the static rules alone, in time linear in its steps.
  bool check_unfit_programs = true;
};

Report verify(const Program &program, const VerifyOptions &options);

/// A program every property of which holds. Only certify() constructs one.
class VerifiedProgram {
public:
  const Program &program() const { return program_; }
  /// The collective the program was verified to implement.
  const CollectiveSpec &collective() const { return collective_; }
  const Report &report() const { return report_; }

private:
  VerifiedProgram(Program program, CollectiveSpec collective, Report report)
      : program_(std::move(program)), collective_(std::move(collective)),
        report_(std::move(report)) {}
  friend tl::expected<VerifiedProgram, Report> certify(const Program &, const VerifyOptions &);
  Program program_;
  CollectiveSpec collective_;
  Report report_;
};

/// The program as a VerifiedProgram when every property holds; otherwise the report.
[[nodiscard]] tl::expected<VerifiedProgram, Report> certify(const Program &program,
                                                            const VerifyOptions &options);

} // namespace syncoll::verifier
