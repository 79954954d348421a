// Topologies the tests build by hand, for closed-form checks.
#pragma once

#include "model/topology.h"

#include <gtest/gtest.h>

namespace syncoll::testing {

/// `n` ranks, every ordered pair linked with `capacity`, latency `alpha_ns` and capacity x
/// `unit_gbps` bandwidth (bytes per nanosecond), and no relations.
inline Topology uniform_fully_connected(int n, int capacity, double alpha_ns, double unit_gbps) {
  TopologyDraft d;
  d.name = "uniform";
  d.num_ranks = n;
  for (int a = 0; a < n; ++a)
    for (int b = 0; b < n; ++b)
      if (a != b)
        d.links.push_back({RankId(a), RankId(b), capacity, Nanoseconds{alpha_ns},
                           BytesPerNs{unit_gbps * capacity}});
  auto t = Topology::create(std::move(d));
  EXPECT_TRUE(t) << t.error().to_string();
  return *t;
}

} // namespace syncoll::testing
