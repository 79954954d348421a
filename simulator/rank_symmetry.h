// Rank symmetry: a program and a machine that look the same from every rank (or from every node)
// run the same way on each, so a simulation need only run one rank (one node) and read the others
// off it.
//
// Why: a ring's program is ranks x 2(ranks - 1) steps per channel, so simulating every rank costs
// the square of the ranks. NCCL's ring Allreduce on 4,096 ranks with its 8 channels is 268 million
// steps, 50 s of simulation; every rank of it does what its neighbour does at the same moment. Run
// on one rank, the same answer takes the 65 thousand steps of that rank.
//
// The symmetry is a shift of the ranks by `k` (rank r plays the part of rank r + k mod n) that maps
// the program onto itself (each rank's thread blocks those of the rank k below, with peers shifted,
// the same operations, counts and dependencies; buffer offsets may differ, they take no time) and
// the machine onto itself (every link to a link alike, every bandwidth relation to one alike,
// switches in place, start times alike, connections across nodes onto connections across
// nodes where the fabric caps them). Then the simulation of the ranks below k is the whole
// simulation: a connection's messages are those of its image whose sender is below k, and a
// link's traffic is that of its orbit's link in the quotient machine (one link and one relation per
// orbit of the shift). This holds where every link's orbit has all n / k members (no link the shift
// keeps in place, which every rank would share), each relation holds links of different orbits,
// and every connection runs over one booked link, its image's: the fluid engine's rates follow the
// order in which it meets hops that start in one picosecond, an order over every rank, which no
// quotient keeps. `find` checks all of that and answers nullopt otherwise. A run over every rank
// orders events of one picosecond globally, which can treat ranks alike differently; the property
// tests (tests/nccl/rank_symmetry_test.cpp) hold the two within 0.1% (docs/cost-model.md, "Rank
// symmetry").
#pragma once

#include "model/program.h"
#include "model/topology.h"
#include "simulator/cost_model.h"
#include "simulator/result.h"

#include <map>
#include <optional>
#include <span>
#include <utility>
#include <vector>

namespace syncoll::simulator {

class RankSymmetry {
public:
  /// The smallest shift (one rank, else one node) under which `program` on `topology` runs alike,
  /// or nullopt. Costs a walk over the program's runs and the topology's links.
  [[nodiscard]] static std::optional<RankSymmetry>
  find(const Program &program, const Topology &topology, const CostModel &model);

  /// k: the ranks below it are simulated, rank r behaves as rank r mod k.
  int shift() const { return shift_; }
  /// Every vertex of the machine, one link of each orbit and one relation of each orbit.
  const Topology &quotient() const { return *quotient_; }
  /// The quotient's link standing for link `full` of the machine.
  LinkId quotient_link(LinkId full) const { return link_of_[full.index()]; }
  /// The connection src -> dst seen from the image whose sender is below k.
  std::pair<RankId, RankId> canonical(RankId src, RankId dst) const;
  /// The route of a canonical connection, over the quotient's links.
  std::span<const LinkId> route(RankId src, RankId dst) const;
  /// A timeline of the simulated ranks spread over every rank: each span once more per shift,
  /// on the rank `shift` further and, for a link's span (thread `link_thread` + the machine's link
  /// id), on the link's image; ordered by start.
  std::vector<TraceSpan> spread(std::vector<TraceSpan> spans, const Topology &machine,
                                int link_thread) const;

private:
  RankSymmetry() = default;
  /// Takes each connection's route, moved to its canonical connection; false unless every one is
  /// its canonical connection's, one booked link, and capped as it is.
  bool take_routes(const Program &program, const Topology &topology, const CostModel &model);

  int shift_ = 0;
  int ranks_ = 0;
  std::optional<Topology> quotient_;
  std::vector<LinkId> link_of_;
  /// The quotient's link of each canonical connection (src, dst): every route is one link.
  std::map<std::pair<int, int>, LinkId> routes_;
};

} // namespace syncoll::simulator
