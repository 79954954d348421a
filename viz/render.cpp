#include "viz/render.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>

namespace syncoll::viz {

struct Renderer::Context {
  GVC_t *gvc = nullptr;
};

Renderer::Renderer() : context_(std::make_unique<Context>()) {
  context_->gvc = gvContext();
}

Renderer::~Renderer() {
  if (context_->gvc)
    gvFreeContext(context_->gvc);
}

namespace {
struct GraphClose {
  void operator()(Agraph_t *g) const { agclose(g); }
};
} // namespace

Expected<std::string> Renderer::render(const std::string &dot, ImageFormat format) {
  GVC_t *gvc = context_->gvc;
  if (!gvc)
    return fail({}, "graphviz: cannot create a context");
  std::unique_ptr<Agraph_t, GraphClose> graph(agmemread(dot.c_str()));
  if (!graph)
    return fail({}, "graphviz: the DOT text does not parse");
  if (gvLayout(gvc, graph.get(), "dot") != 0)
    return fail({}, "graphviz: layout failed");
  char *data = nullptr;
  unsigned int length = 0; // Graphviz 2.43 measures in unsigned int
  const int rc =
      gvRenderData(gvc, graph.get(), format == ImageFormat::Svg ? "svg" : "png", &data, &length);
  std::string out;
  if (rc == 0 && data)
    out.assign(data, length);
  if (data)
    gvFreeRenderData(data);
  gvFreeLayout(gvc, graph.get());
  if (rc != 0)
    return fail({}, "graphviz: rendering failed");
  return out;
}

} // namespace syncoll::viz
