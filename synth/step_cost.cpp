#include "synth/step_cost.h"

#include "model/invariant.h"

#include <algorithm>

namespace syncoll::synth {

StepCoster::StepCoster(const Topology &topology, ExactUnits bandwidths, int chunks)
    : topology_(topology), bandwidths_(std::move(bandwidths)), chunks_(chunks),
      link_load_(topology.links().size(), 0), relation_load_(topology.relations().size(), 0),
      link_total_(topology.links().size(), 0), relation_total_(topology.relations().size(), 0),
      relations_of_link_(topology.links().size()) {
  SYNCOLL_INVARIANT(chunks > 0, "a schedule has at least one piece per rank");
  for (size_t r = 0; r < topology.relations().size(); ++r)
    for (LinkId l : topology.relations()[r].links)
      relations_of_link_[l.index()].push_back(int32_t(r));
}

Fraction StepCoster::time_of(int64_t load, int64_t units) const {
  return Fraction::of(load * bandwidths_.units_per_gbps, int64_t(chunks_) * units);
}

StepCost StepCoster::add_step(std::span<const Send> sends) {
  touched_links_.clear();
  for (const Send &send : sends) {
    const auto link = topology_.find_link(send.src, send.dst);
    SYNCOLL_INVARIANT(link.has_value(), "a step sends between ranks without a link");
    if (link_load_[link->index()]++ == 0)
      touched_links_.push_back(link->index());
  }
  StepCost cost;
  auto note = [&](int64_t load, int capacity, int64_t units) {
    cost.rounds = std::max(cost.rounds, int((load + capacity - 1) / capacity));
    const Fraction time = time_of(load, units);
    if (less(cost.time, time))
      cost.time = time;
  };
  std::vector<int32_t> touched_relations;
  for (size_t l : touched_links_) {
    const int64_t load = link_load_[l];
    note(load, topology_.links()[l].capacity, bandwidths_.links[l]);
    link_total_[l] += load;
    for (int32_t r : relations_of_link_[l]) {
      if (relation_load_[size_t(r)] == 0)
        touched_relations.push_back(r);
      relation_load_[size_t(r)] += load;
    }
    link_load_[l] = 0;
  }
  for (int32_t r : touched_relations) {
    const int64_t load = relation_load_[size_t(r)];
    note(load, topology_.relations()[size_t(r)].capacity, bandwidths_.relations[size_t(r)]);
    relation_total_[size_t(r)] += load;
    relation_load_[size_t(r)] = 0;
  }
  step_synchronous_ = sum(step_synchronous_, cost.time);
  return cost;
}

Fraction StepCoster::pipelined() const {
  Fraction busiest;
  for (size_t l = 0; l < link_total_.size(); ++l)
    if (link_total_[l] > 0 && less(busiest, time_of(link_total_[l], bandwidths_.links[l])))
      busiest = time_of(link_total_[l], bandwidths_.links[l]);
  for (size_t r = 0; r < relation_total_.size(); ++r)
    if (relation_total_[r] > 0 &&
        less(busiest, time_of(relation_total_[r], bandwidths_.relations[r])))
      busiest = time_of(relation_total_[r], bandwidths_.relations[r]);
  return busiest;
}

} // namespace syncoll::synth
