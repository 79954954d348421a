// DOT text of the chunk DAG and the instruction DAG (DOT is the interchange; viz/ renders it).
// Here rather than in viz/ because viz/ sits below lowering/ (docs/architecture.md, "Layers").
#pragma once

#include "lowering/compile.h"

#include <string>

namespace syncoll::lowering {

/// Operations as nodes ("copy r0 i[1] -> r1 o[1]"), true dependencies solid, false ones dashed.
std::string chunk_dag_dot(const ChunkDag &dag, const std::string &name);

/// Instructions after fusion, grouped in a cluster per rank, labelled with their thread block
/// and channel; data dependencies solid (true) or dashed (false), messages blue.
std::string instruction_dag_dot(const InstructionDag &dag, const std::string &name);

} // namespace syncoll::lowering
