#include "viz/render.h"

#include <graphviz/cgraph.h>
#include <graphviz/gvc.h>
#include <memory>

namespace syncoll::viz {
namespace {

// Owners for Graphviz's C handles: a context per call, no process-wide state of ours.
struct ContextFree {
  void operator()(GVC_t *c) const { gvFreeContext(c); }
};
struct GraphClose {
  void operator()(Agraph_t *g) const { agclose(g); }
};

} // namespace

Expected<std::string> render_dot(const std::string &dot, ImageFormat format) {
  std::unique_ptr<GVC_t, ContextFree> gvc(gvContext());
  if (!gvc)
    return fail({}, "graphviz: cannot create a context");
  std::unique_ptr<Agraph_t, GraphClose> graph(agmemread(dot.c_str()));
  if (!graph)
    return fail({}, "graphviz: the DOT text does not parse");
  if (gvLayout(gvc.get(), graph.get(), "dot") != 0)
    return fail({}, "graphviz: layout failed");
  char *data = nullptr;
  unsigned int length = 0; // Graphviz 2.43 measures in unsigned int
  const int rc = gvRenderData(gvc.get(), graph.get(), format == ImageFormat::Svg ? "svg" : "png",
                              &data, &length);
  std::string out;
  if (rc == 0 && data)
    out.assign(data, length);
  if (data)
    gvFreeRenderData(data);
  gvFreeLayout(gvc.get(), graph.get());
  if (rc != 0)
    return fail({}, "graphviz: rendering failed");
  return out;
}

} // namespace syncoll::viz
