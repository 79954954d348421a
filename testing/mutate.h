// Faults injected into correct programs, to test a checker, a compiler pass or a runtime on
// programs known to be broken in one chosen way. Every mutant is re-verified: it is returned only
// when the verifier finds exactly the fault asked for (structure and resources still hold).
#pragma once

#include "model/collective.h"
#include "model/program.h"

#include <cstddef>
#include <optional>
#include <string_view>

namespace syncoll::testing {

enum class Fault {
  Deadlock,    ///< steps of a thread block reordered so that the program can wait forever
  Race,        ///< a cross-thread-block dependency dropped
  WrongResult, ///< a step moved to read or write another chunk
};
std::string_view fault_name(Fault fault);

/// A single edit of `program` after which the verifier reports the fault's property violated
/// (deadlock freedom, race freedom, the postcondition) for `collective`. The candidate edits are
/// tried in a fixed order starting at `choice` modulo their number, so a generator picks among
/// them and shrinks toward the first. None when no single edit of that kind breaks the program.
[[nodiscard]] std::optional<Program> inject_fault(const Program &program,
                                                  const CollectiveSpec &collective, Fault fault,
                                                  size_t choice = 0);

} // namespace syncoll::testing
