// What one step of a k-synchronous schedule costs on a topology's links and bandwidth relations,
// exactly: a step takes as long as its busiest link or relation for its bandwidth, and the same
// sends pipelined (every step's sends in flight at once, as streams or trees do) take as long as
// the link or relation busiest over all steps together.
#pragma once

#include "model/algorithm.h"
#include "model/cut_certificate.h"
#include "model/fraction.h"
#include "model/topology.h"

#include <span>
#include <vector>

namespace syncoll::synth {

struct StepCost {
  /// Rounds the step needs: its busiest link or relation over that one's capacity, at least 1.
  int rounds = 1;
  /// ns per byte of one rank's share (the unit of a cut bound's lambda).
  Fraction time;
};

/// Adds up the sends of a schedule whose ranks hold `chunks` pieces each, step by step.
class StepCoster {
public:
  StepCoster(const Topology &topology, ExactUnits units, int chunks);

  /// The cost of one step; its sends must run over links of the topology.
  StepCost add_step(std::span<const Send> sends);
  /// The sum of every step's time so far.
  Fraction step_synchronous() const { return step_synchronous_; }
  /// The busiest link or relation over all steps so far: the time of the same sends pipelined.
  Fraction pipelined() const;

private:
  Fraction time_of(int64_t load, int64_t units) const;
  const Topology &topology_;
  ExactUnits bandwidths_;
  int chunks_;
  std::vector<int64_t> link_load_, relation_load_;
  std::vector<int64_t> link_total_, relation_total_;
  std::vector<std::vector<int32_t>> relations_of_link_;
  std::vector<size_t> touched_links_;
  Fraction step_synchronous_;
};

} // namespace syncoll::synth
