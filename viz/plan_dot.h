// MSCCL++ execution plans drawn (DOT): a counterexample of verify_plan on the plan it names.
#pragma once

#include "mscclpp/plan.h"
#include "mscclpp/verify_plan.h"

#include <optional>
#include <string>

namespace syncoll::viz {

/// The first violated property's counterexample on the plan: a cluster per GPU, in it a lane per
/// thread block the counterexample names with its operations in order (the GPU's user as a node
/// of its own where an access around the kernel is named); the blocked operations of a deadlock,
/// both sides of each race (joined by a bold edge, "races with"), or the last writers of wrong
/// output, drawn red. None when no verdict names an operation.
std::optional<std::string> plan_counterexample_dot(const mscclpp::ExecutionPlan &plan,
                                                   const mscclpp::PlanReport &report);

} // namespace syncoll::viz
