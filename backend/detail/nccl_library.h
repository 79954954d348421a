// NCCL as the machine has it, loaded at run time (nccl_library.cpp): its release, and the host
// calls of nccl.h answered by the library found on the library path.
#pragma once

#include "model/diagnostics.h"

#include <string>

namespace syncoll::backend::detail {

/// The release of the libnccl.so.2 on this machine's library path (NCCL_VERSION's code: 22809
/// for 2.28.9); fails with why when none loads.
[[nodiscard]] Expected<int> nccl_library_version();

/// "2.28.9" for 22809.
std::string nccl_version_text(int code);

} // namespace syncoll::backend::detail
