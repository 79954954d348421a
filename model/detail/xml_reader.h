// Located reading of XML files (MSCCL-IR programs, NCCL's topology dumps): each element and
// attribute is reported at its line and column, and typed attributes say what they should have
// held. Internal to the libraries that read XML (model/, nccl/): it includes pugixml, which the
// package's public headers do not.
#pragma once

#include "model/diagnostics.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <fmt/format.h>
#include <initializer_list>
#include <pugixml.hpp>
#include <string>
#include <string_view>

namespace syncoll::detail {

class XmlReader {
public:
  XmlReader(std::string_view text, std::string file, std::string_view format = "MSCCL-IR")
      : text_(text), file_(std::move(file)), format_(format) {}

  SourceLocation at(const pugi::xml_node &node) const {
    // offset_debug points at the element name; step back to its '<'.
    return location_at(text_, file_, size_t(std::max<ptrdiff_t>(0, node.offset_debug() - 1)));
  }

  SourceLocation at(const pugi::xml_node &node, std::string_view attribute) const {
    ptrdiff_t start = node.offset_debug();
    size_t end = text_.find('>', size_t(start));
    std::string_view tag =
        text_.substr(size_t(start),
                     end == std::string_view::npos ? std::string_view::npos : end - size_t(start));
    for (size_t pos = 0; (pos = tag.find(attribute, pos)) != std::string_view::npos; ++pos) {
      bool starts = pos > 0 && (tag[pos - 1] == ' ' || tag[pos - 1] == '\t' ||
                                tag[pos - 1] == '\n' || tag[pos - 1] == '\r');
      size_t after = pos + attribute.size();
      while (after < tag.size() && (tag[after] == ' ' || tag[after] == '\t'))
        ++after;
      if (starts && after < tag.size() && tag[after] == '=')
        return location_at(text_, file_, size_t(start) + pos);
    }
    return at(node);
  }

  Expected<std::string> string_attr(const pugi::xml_node &node, const char *name) const {
    pugi::xml_attribute a = node.attribute(name);
    if (!a)
      return fail(at(node), fmt::format("<{}> is missing attribute '{}'", node.name(), name));
    return std::string(a.value());
  }

  Expected<int64_t> int_attr(const pugi::xml_node &node, const char *name, int64_t min,
                             int64_t max) const {
    pugi::xml_attribute a = node.attribute(name);
    if (!a)
      return fail(at(node), fmt::format("<{}> is missing attribute '{}'", node.name(), name));
    std::string_view s = a.value();
    int64_t v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (s.empty() || ec != std::errc() || end != s.data() + s.size())
      return fail(at(node, name),
                  fmt::format("attribute '{}' must be an integer, found '{}'", name, s));
    if (v < min || v > max)
      return fail(at(node, name), fmt::format("attribute '{}' value {} is out of range [{}, {}]",
                                              name, v, min, max));
    return v;
  }

  Expected<bool> flag_attr(const pugi::xml_node &node, const char *name) const {
    pugi::xml_attribute a = node.attribute(name);
    if (!a)
      return fail(at(node), fmt::format("<{}> is missing attribute '{}'", node.name(), name));
    std::string_view s = a.value();
    if (s != "0" && s != "1")
      return fail(at(node, name),
                  fmt::format("attribute '{}' must be 0 or 1, found '{}'", name, s));
    return s == "1";
  }

  void warn_unknown_attributes(const pugi::xml_node &node,
                               std::initializer_list<std::string_view> known,
                               Diagnostics &warnings) const {
    for (auto a : node.attributes()) {
      bool ok = false;
      for (auto k : known)
        ok = ok || k == a.name();
      if (!ok)
        warnings.warning(at(node, a.name()),
                         fmt::format("<{}> attribute '{}' is not part of {}; ignored", node.name(),
                                     a.name(), format_));
    }
  }

  Expected<void> only_children(const pugi::xml_node &node, const char *child) const {
    for (auto c : node.children()) {
      if (c.type() != pugi::node_element)
        continue;
      if (std::string_view(c.name()) != child)
        return fail(at(c), fmt::format("unexpected element <{}> inside <{}>; expected <{}>",
                                       c.name(), node.name(), child));
    }
    return {};
  }

  std::string_view text_;
  std::string file_;
  std::string_view format_; ///< the file format unknown attributes are not part of
};

/// Parses `text` into `doc`; malformed XML is one error at the byte where pugixml stopped.
[[nodiscard]] inline Expected<void> parse_xml(pugi::xml_document &doc, std::string_view text,
                                              const std::string &file) {
  const pugi::xml_parse_result parsed =
      doc.load_buffer(text.data(), text.size(), pugi::parse_default);
  if (!parsed)
    return fail(location_at(text, file, size_t(std::max<ptrdiff_t>(0, parsed.offset))),
                fmt::format("invalid XML: {}", parsed.description()));
  return {};
}

} // namespace syncoll::detail
