#include "model/diagnostics.h"

#include "model/invariant.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace syncoll {

SourceLocation location_at(std::string_view text, const std::string &file, size_t offset) {
  int line = 1, column = 1;
  for (size_t i = 0; i < std::min(offset, text.size()); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {file, line, column};
}

std::string Diagnostic::to_string() const {
  std::string out;
  if (!location.file.empty())
    out += location.file + ":";
  if (location.line > 0) {
    out += std::to_string(location.line) + ":";
    if (location.column > 0)
      out += std::to_string(location.column) + ":";
  }
  if (location.line == 0 && !pointer.empty())
    out += pointer + ":";
  if (!out.empty())
    out += " ";
  if (severity == Severity::Warning)
    out += "warning: ";
  out += message;
  return out;
}

void Diagnostics::error(SourceLocation location, std::string message) {
  items_.push_back({Severity::Error, std::move(location), std::move(message), {}});
}

void Diagnostics::error_at(std::string pointer, std::string message) {
  items_.push_back({Severity::Error, {}, std::move(message), std::move(pointer)});
}

void Diagnostics::warning(SourceLocation location, std::string message) {
  items_.push_back({Severity::Warning, std::move(location), std::move(message), {}});
}

void Diagnostics::append(const Diagnostics &other) {
  items_.insert(items_.end(), other.items_.begin(), other.items_.end());
}

bool Diagnostics::has_errors() const {
  return std::any_of(items_.begin(), items_.end(),
                     [](const Diagnostic &d) { return d.severity == Severity::Error; });
}

std::string Diagnostics::to_string() const {
  std::string out;
  for (const auto &item : items_)
    out += item.to_string() + "\n";
  return out;
}

namespace detail {
void invariant_failed(const char *condition, const char *message, const char *file, int line) {
  std::fprintf(stderr, "%s:%d: syncoll internal error: %s (%s)\n", file, line, message, condition);
  std::abort();
}
} // namespace detail

Expected<std::string> read_text_file(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return fail({path, 0, 0}, "cannot open file");
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

} // namespace syncoll
