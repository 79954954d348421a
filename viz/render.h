// Rendering DOT through Graphviz's library (gvc, the "dot" layout): the only place Graphviz is
// used.
#pragma once

#include "model/diagnostics.h"

#include <memory>
#include <string>

namespace syncoll::viz {

enum class ImageFormat { Svg, Png };

/// Holds one Graphviz context for all the drawings of a process. Make one per process, not one
/// per drawing: Graphviz 2.43's pango plugin keeps a font name from a context in process-wide
/// state and reads it after that context is freed (ASan reports the use after free as soon as a
/// second context lays out text).
class Renderer {
public:
  Renderer();
  ~Renderer();
  Renderer(const Renderer &) = delete;
  Renderer &operator=(const Renderer &) = delete;

  /// The rendered image (PNG bytes in a string). Fails for DOT Graphviz cannot read.
  [[nodiscard]] Expected<std::string> render(const std::string &dot, ImageFormat format);

private:
  struct Context;
  std::unique_ptr<Context> context_;
};

} // namespace syncoll::viz
