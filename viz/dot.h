// Graphviz DOT text for every stage (DOT is the interchange; render.h turns it into SVG or PNG).
// Each builder is deterministic: the same input gives byte-identical text.
#pragma once

#include "model/algorithm.h"
#include "model/program.h"
#include "model/topology.h"
#include "verifier/report.h"

#include <optional>
#include <string>

namespace syncoll::viz {

/// Ranks as nodes, nested in clusters by the hierarchy (node, then GPU); a link pair with equal
/// capacity in both directions as one two-headed edge, capacity above 1 as "xN" and a heavier
/// line; each bandwidth relation as a cluster holding one node named after it, joined by dashed
/// edges to the ranks whose links it caps.
std::string topology_dot(const Topology &topology);

/// Ranks by steps: a column per step boundary (t = 0..S), the step's rounds in its label, and
/// each (source, destination) pair of a step as an edge labelled with its chunks; reductions
/// dashed and marked "+".
std::string algorithm_dot(const Algorithm &algorithm);

/// What to mark on a program drawing.
struct ProgramHighlight {
  std::vector<verifier::StepRef> steps;                               ///< drawn red
  std::vector<std::pair<verifier::StepRef, verifier::StepRef>> edges; ///< bold red, labelled
  std::string edge_label;
  std::string title;
};

/// A cluster per rank and, inside it, a lane per thread block with its steps in order; the k-th
/// send on a connection joined to the k-th receive on it across ranks (solid), and dependencies
/// (dashed, from the step waited for to the waiting one).
std::string program_dot(const Program &program, const ProgramHighlight &highlight = {});

/// The first violated property's counterexample on the program: a deadlock's wait-for cycle,
/// or the racing pairs. None when no verdict has a drawable counterexample.
std::optional<std::string> counterexample_dot(const Program &program,
                                              const verifier::Report &report);

/// A DOT string literal, quoted and escaped.
std::string quote(const std::string &text);

} // namespace syncoll::viz
