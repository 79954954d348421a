// Rendering DOT through Graphviz's library (gvc, the "dot" layout): the only place Graphviz is
// used.
#pragma once

#include "model/diagnostics.h"

#include <string>
#include <string_view>

namespace syncoll::viz {

enum class ImageFormat { Svg, Png };

/// The rendered image (PNG bytes in a string). Fails with Graphviz's message for DOT it cannot
/// read.
Expected<std::string> render_dot(const std::string &dot, ImageFormat format);

} // namespace syncoll::viz
