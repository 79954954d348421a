// One Graphviz context for the whole viz test program (see Renderer): an inline function's
// static is one object across the program's files.
#pragma once

#include "viz/render.h"

namespace syncoll::viz {

inline Renderer &shared_renderer() {
  static Renderer shared;
  return shared;
}

} // namespace syncoll::viz
