// What every reader promises on any input, checked by the fuzz targets: a value, or diagnostics
// that each carry a message and a location in the input (line and column, or the file alone when
// the input could not be read at all). Crashes, hangs and leaks are libFuzzer's and the
// sanitizers' to catch; a broken promise here aborts with the diagnostic, so libFuzzer keeps the
// input as a crash.
#pragma once

#include "model/diagnostics.h"
#include "model/json_document.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

namespace syncoll::fuzz {

/// The name every target gives its input.
inline constexpr const char *kInputName = "input";

inline void check_diagnostics(const Diagnostics &diagnostics) {
  if (diagnostics.items().empty()) {
    std::fprintf(stderr, "reader contract: failed without a diagnostic\n");
    std::abort();
  }
  for (const Diagnostic &d : diagnostics.items()) {
    const bool located =
        d.location.file == kInputName && d.location.line >= 1 && d.location.column >= 1;
    if (d.message.empty() || !located) {
      std::fprintf(stderr, "reader contract: diagnostic without %s: '%s'\n",
                   d.message.empty() ? "a message" : "a location in the input",
                   d.to_string().c_str());
      std::abort();
    }
  }
}

template <class T> void check_reader(const Expected<T> &result) {
  if (!result)
    check_diagnostics(result.error());
}

inline std::string_view as_text(const uint8_t *data, size_t size) {
  return {reinterpret_cast<const char *>(data), size};
}

/// A JSON reader: the document parsed, then `read` applied to its root.
template <class Read> void check_json_reader(const uint8_t *data, size_t size, Read read) {
  auto document = JsonDocument::parse(as_text(data, size), kInputName);
  if (!document) {
    check_diagnostics(document.error());
    return;
  }
  check_reader(read(document->root()));
}

} // namespace syncoll::fuzz
