// Diagnostics: what is wrong with an input, and where.
//
// Every reader and factory reports bad input as Diagnostics inside tl::expected; the CLI prints
// them one per line as `file:line:col: message` (docs/architecture.md, "Files and the CLI").
// Warnings travel beside a successful value (see Warned<T>) so that a reader can accept a file and
// still say what is odd about it.
#pragma once

#include <string>
#include <string_view>
#include <tl/expected.hpp>
#include <vector>

namespace syncoll {

/// A place in an input file. line and column are 1-based; 0 means "not known".
struct SourceLocation {
  std::string file;
  int line = 0;
  int column = 0;

  friend bool operator==(const SourceLocation &, const SourceLocation &) = default;
};

/// Where byte `offset` of `text` (a file's contents) sits: line and column from 1, the column
/// counted in bytes; an offset past the end is the end.
[[nodiscard]] SourceLocation location_at(std::string_view text, const std::string &file,
                                         size_t offset);

enum class Severity { Error, Warning };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLocation location;
  std::string message;
  /// Where in a structured input the problem sits, as a JSON pointer into the draft that was
  /// validated ("/links/3/capacity"). A reader that knows the text resolves it to a location.
  std::string pointer;

  /// `file:line:col: message` for errors, `file:line:col: warning: message` for warnings; parts
  /// of the location that are not known are left out.
  std::string to_string() const;
  friend bool operator==(const Diagnostic &, const Diagnostic &) = default;
};

class Diagnostics {
public:
  Diagnostics() = default;
  explicit Diagnostics(Diagnostic first) { items_.push_back(std::move(first)); }

  void error(SourceLocation location, std::string message);
  /// An error at a place in a structured input, before its text location is known.
  void error_at(std::string pointer, std::string message);
  void warning(SourceLocation location, std::string message);
  void append(const Diagnostics &other);

  bool has_errors() const;
  bool empty() const { return items_.empty(); }
  const std::vector<Diagnostic> &items() const { return items_; }
  /// Fills in the text location of every diagnostic that carries only a pointer.
  template <class Resolve> void resolve_pointers(Resolve &&resolve) {
    for (auto &item : items_)
      if (item.location.line == 0 && !item.pointer.empty())
        item.location = resolve(item.pointer);
  }
  /// One line per diagnostic, each ending in a newline.
  std::string to_string() const;

private:
  std::vector<Diagnostic> items_;
};

template <class T> using Expected = tl::expected<T, Diagnostics>;

/// Shorthand for returning a single error.
inline tl::unexpected<Diagnostics> fail(SourceLocation location, std::string message) {
  Diagnostics diagnostics;
  diagnostics.error(std::move(location), std::move(message));
  return tl::unexpected(std::move(diagnostics));
}

/// Shorthand for returning a single error at a JSON pointer of a draft.
inline tl::unexpected<Diagnostics> fail_at(std::string pointer, std::string message) {
  Diagnostics diagnostics;
  diagnostics.error_at(std::move(pointer), std::move(message));
  return tl::unexpected(std::move(diagnostics));
}

/// Binds `var` to the value of an Expected, or returns its diagnostics from the enclosing
/// function (which must itself return an Expected).
#define SYNCOLL_TRY(var, expr)                                                                     \
  auto var##_result = (expr);                                                                      \
  if (!var##_result)                                                                               \
    return tl::unexpected(std::move(var##_result).error());                                        \
  auto var = std::move(*var##_result)

/// Returns the diagnostics of an Expected<void> from the enclosing function when it failed.
#define SYNCOLL_CHECK(expr)                                                                        \
  do {                                                                                             \
    if (auto syncoll_check_result = (expr); !syncoll_check_result)                                 \
      return tl::unexpected(std::move(syncoll_check_result).error());                              \
  } while (false)

/// A file's whole text; a file that cannot be opened is an error located at the file.
[[nodiscard]] Expected<std::string> read_text_file(const std::string &path);

/// A value accepted with warnings (e.g. an MSCCL-IR file using the old runtime's spellings).
template <class T> struct Warned {
  T value;
  Diagnostics warnings;
};

} // namespace syncoll
