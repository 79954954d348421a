// Checks a drawing as a person would look at it: its size in pixels and whether any two of its
// labels overlap. SVG text boxes are estimated from each <text> element's position, anchor and
// font size (0.55 em a character, Helvetica's average); rotated text (an axis title) is left out.
#pragma once

#include <cstdint>
#include <optional>
#include <pugixml.hpp>
#include <string>
#include <utility>
#include <vector>

namespace syncoll::testing {

/// A PNG's width and height from its header; none for anything else.
inline std::optional<std::pair<int, int>> png_size(const std::string &png) {
  if (png.size() < 24 || png.compare(1, 3, "PNG") != 0)
    return std::nullopt;
  const auto word = [&](size_t at) {
    return int(uint32_t(uint8_t(png[at])) << 24 | uint32_t(uint8_t(png[at + 1])) << 16 |
               uint32_t(uint8_t(png[at + 2])) << 8 | uint32_t(uint8_t(png[at + 3])));
  };
  return std::pair{word(16), word(20)};
}

struct LabelBox {
  std::string text;
  double left = 0, top = 0, right = 0, bottom = 0;
};

namespace detail {

inline double font_px(pugi::xml_node n) {
  for (; n; n = n.parent())
    if (pugi::xml_attribute size = n.attribute("font-size"))
      return size.as_double();
  return 11; // the study report's CSS size
}

inline std::string anchor(pugi::xml_node text) {
  if (pugi::xml_attribute a = text.attribute("text-anchor"))
    return a.value();
  const std::string cls = text.attribute("class").value();
  if (cls == "xtick" || cls == "cell" || cls == "ylabel")
    return "middle";
  return cls == "ytick" ? "end" : "start";
}

} // namespace detail

/// Every unrotated label of an SVG drawing, in document order.
inline std::vector<LabelBox> label_boxes(const std::string &svg) {
  pugi::xml_document doc;
  doc.load_string(svg.c_str());
  std::vector<LabelBox> boxes;
  for (const pugi::xpath_node &found : doc.select_nodes("//text")) {
    const pugi::xml_node t = found.node();
    if (t.attribute("transform"))
      continue;
    const std::string text = t.child_value();
    if (text.empty())
      continue;
    const double size = detail::font_px(t), width = 0.55 * size * double(text.size());
    const double x = t.attribute("x").as_double(), y = t.attribute("y").as_double();
    const std::string a = detail::anchor(t);
    const double left = a == "middle" ? x - width / 2 : a == "end" ? x - width : x;
    boxes.push_back({text, left, y - 0.75 * size, left + width, y + 0.2 * size});
  }
  return boxes;
}

/// The first two labels that overlap by more than a pixel each way, as "a" / "b"; none if none.
inline std::optional<std::string> overlapping_labels(const std::string &svg) {
  const std::vector<LabelBox> boxes = label_boxes(svg);
  for (size_t i = 0; i < boxes.size(); ++i)
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      const LabelBox &a = boxes[i], &b = boxes[j];
      if (std::min(a.right, b.right) - std::max(a.left, b.left) > 1 &&
          std::min(a.bottom, b.bottom) - std::max(a.top, b.top) > 1)
        return "\"" + a.text + "\" / \"" + b.text + "\"";
    }
  return std::nullopt;
}

} // namespace syncoll::testing
