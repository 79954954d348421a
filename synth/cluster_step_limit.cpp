// The cluster's step limit (synth/cluster.h, box_cluster_step_limit): the least time any
// schedule of so many steps needs on a box cluster, as a linear program whose dual z3 solves and
// whose bound model/linear_bound.h re-derives in exact arithmetic, so that z3 is never trusted.
#include "model/linear_bound.h"
#include "synth/cluster.h"

#include <fmt/format.h>
#include <z3++.h>

namespace syncoll::synth {

namespace {

// The step limit's program (see the header), per average GPU of one box, in 6 variables a step:
// a_t remote shares new to it over its NIC, b_t over the switch, own shares of its box over the
// NIC and over the switch, the step's time, and box_t, the distinct remote shares its box holds.
LinearProgram step_limit_program(const BoxCluster &cluster, int steps, int64_t units_per_gbps) {
  const int64_t g = cluster.gpus;
  const int64_t remote = int64_t(cluster.boxes - 1) * g;
  const auto var = [](int t, int which) { return int32_t(6 * t + which); };
  enum { kNic, kSwitch, kOwnNic, kOwnSwitch, kTime, kBox };
  LinearProgram lp;
  lp.cost.assign(size_t(6 * steps), 0);
  // What the GPU holds of the remote shares after `last`: the sum of a and b so far.
  const auto held = [&](int last, LinearRow &row, int64_t sign) {
    for (int j = 0; j <= last; ++j) {
      row.terms.push_back({var(j, kNic), sign});
      row.terms.push_back({var(j, kSwitch), sign});
    }
  };
  LinearRow all_remote{{}, RowSense::Equal, remote}, all_own{{}, RowSense::Equal, g - 1};
  for (int t = 0; t < steps; ++t) {
    lp.cost[size_t(var(t, kTime))] = units_per_gbps;
    // b_t <= box_(t-1) - held_(t-1): over the switch only what the box held a step before.
    LinearRow from_box{{{var(t, kSwitch), 1}}, RowSense::AtMost, 0};
    if (t > 0)
      from_box.terms.push_back({var(t - 1, kBox), -1});
    held(t - 1, from_box, 1);
    lp.rows.push_back(std::move(from_box));
    // box_t <= box_(t-1) + g a_t, and at most every remote share.
    LinearRow grows{{{var(t, kBox), 1}, {var(t, kNic), -g}}, RowSense::AtMost, 0};
    if (t > 0)
      grows.terms.push_back({var(t - 1, kBox), -1});
    lp.rows.push_back(std::move(grows));
    lp.rows.push_back({{{var(t, kBox), 1}}, RowSense::AtMost, remote});
    // held_t <= box_t
    LinearRow in_box{{{var(t, kBox), -1}}, RowSense::AtMost, 0};
    held(t, in_box, 1);
    lp.rows.push_back(std::move(in_box));
    // The step lasts as long as the GPU's share of its NIC and its way into the switch need.
    lp.rows.push_back({{{var(t, kTime), cluster.nic_units},
                        {var(t, kNic), -cluster.gpus_per_nic},
                        {var(t, kOwnNic), -cluster.gpus_per_nic}},
                       RowSense::AtLeast,
                       0});
    lp.rows.push_back(
        {{{var(t, kTime), cluster.port_units}, {var(t, kSwitch), -1}, {var(t, kOwnSwitch), -1}},
         RowSense::AtLeast,
         0});
    all_own.terms.push_back({var(t, kOwnNic), 1});
    all_own.terms.push_back({var(t, kOwnSwitch), 1});
  }
  held(steps - 1, all_remote, 1);
  lp.rows.push_back(std::move(all_remote));
  lp.rows.push_back(std::move(all_own));
  return lp;
}

// The best multipliers of the program's rows (its dual, solved exactly by z3), as "p/q" text.
Expected<std::vector<std::string>> dual_multipliers(const LinearProgram &lp) {
  z3::context ctx;
  z3::optimize dual(ctx);
  const auto number = [&](int64_t v) { return ctx.real_val(std::to_string(v).c_str()); };
  std::vector<z3::expr> y;
  std::vector<z3::expr> column(lp.cost.size(), number(0));
  z3::expr objective = number(0);
  for (size_t i = 0; i < lp.rows.size(); ++i) {
    const LinearRow &row = lp.rows[i];
    y.push_back(ctx.real_const(fmt::format("y{}", i).c_str()));
    switch (row.sense) {
    case RowSense::AtLeast:
      dual.add(y.back() >= 0);
      break;
    case RowSense::AtMost:
      dual.add(y.back() <= 0);
      break;
    case RowSense::Equal:
      break;
    }
    for (const auto &[variable, coefficient] : row.terms)
      column[size_t(variable)] = column[size_t(variable)] + number(coefficient) * y.back();
    objective = objective + number(row.rhs) * y.back();
  }
  for (size_t j = 0; j < column.size(); ++j)
    dual.add(column[j] <= number(lp.cost[j]));
  dual.maximize(objective);
  try {
    if (dual.check() != z3::sat)
      return fail({}, "z3 found no multipliers for the cluster's step limit");
    const z3::model model = dual.get_model();
    std::vector<std::string> out;
    for (const z3::expr &multiplier : y)
      out.push_back(Z3_get_numeral_string(ctx, model.eval(multiplier, true)));
    return out;
  } catch (const z3::exception &e) {
    return fail({}, fmt::format("z3 failed on the cluster's step limit: {}", e.msg()));
  }
}

} // namespace

Expected<Fraction> box_cluster_step_limit(const BoxCluster &cluster, int steps,
                                          int64_t units_per_gbps) {
  if (steps < 1)
    return fail({}, fmt::format("a schedule has at least 1 step, got {}", steps));
  const LinearProgram lp = step_limit_program(cluster, steps, units_per_gbps);
  SYNCOLL_TRY(multipliers, dual_multipliers(lp));
  // The limit is what the multipliers prove, re-derived in exact arithmetic without z3.
  SYNCOLL_TRY(bound, check_linear_bound(lp, multipliers));
  return bound.value;
}

} // namespace syncoll::synth
