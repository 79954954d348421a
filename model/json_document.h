// A parsed JSON file that remembers where every value starts.
//
// nlohmann::json (3.11, Debian 12) keeps no positions, yet a semantic error found after parsing
// ("capacity must be positive" at /links/3/capacity) must still be reported as file:line:col.
// JsonDocument parses with nlohmann and keeps the text; the first time a location is asked for
// (an error is being reported) it walks the text once to map each JSON pointer to its line and
// column. A file read without errors never pays for the map. JsonView gives typed, located
// access for the readers in model/.
#pragma once

#include "model/diagnostics.h"

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace syncoll {

class JsonView;

class JsonDocument {
public:
  /// Parses text; a syntax error comes back as one located diagnostic.
  [[nodiscard]] static Expected<JsonDocument> parse(std::string_view text, std::string file_name);
  /// Reads and parses a file; an unreadable file is reported against its name.
  [[nodiscard]] static Expected<JsonDocument> read_file(const std::string &path);

  const std::string &file() const { return file_; }
  /// Where the value at `pointer` starts; the nearest located ancestor when unknown.
  SourceLocation location(const std::string &pointer) const;
  JsonView root() const;

private:
  std::string file_;
  std::string text_;
  nlohmann::json root_;
  /// Built by the first `location` call: a cache, not part of the document's value.
  mutable std::optional<std::map<std::string, std::pair<int, int>>> positions_;
};

/// A located, read-only view of one value of a JsonDocument.
class JsonView {
public:
  JsonView(const JsonDocument &document, std::string pointer, const nlohmann::json &value)
      : document_(&document), pointer_(std::move(pointer)), value_(&value) {}

  const nlohmann::json &json() const { return *value_; }
  const std::string &pointer() const { return pointer_; }
  SourceLocation location() const { return document_->location(pointer_); }
  /// Location of a value below this one, given by a pointer relative to it.
  SourceLocation location_of(const std::string &relative) const {
    return document_->location(pointer_ + relative);
  }
  tl::unexpected<Diagnostics> error(std::string message) const { return fail(location(), message); }

  bool is_object() const { return value_->is_object(); }
  bool is_array() const { return value_->is_array(); }
  bool is_string() const { return value_->is_string(); }
  bool has(const std::string &key) const { return value_->is_object() && value_->contains(key); }

  /// The member `key` of an object; missing key or non-object is an error at this value.
  [[nodiscard]] Expected<JsonView> member(const std::string &key) const;
  /// The member `key` when present.
  std::optional<JsonView> optional_member(const std::string &key) const;
  /// Every element of an array.
  [[nodiscard]] Expected<std::vector<JsonView>> elements() const;
  /// Every member of an object, in key order.
  [[nodiscard]] Expected<std::vector<std::pair<std::string, JsonView>>> members() const;
  /// Rejects keys outside `allowed` (catches typos such as "capcity").
  [[nodiscard]] Expected<void> only_keys(std::initializer_list<std::string_view> allowed) const;

  [[nodiscard]] Expected<int64_t> as_int(int64_t min, int64_t max) const;
  [[nodiscard]] Expected<double> as_number(double min, double max) const;
  [[nodiscard]] Expected<std::string> as_string() const;
  [[nodiscard]] Expected<bool> as_bool() const;

private:
  const JsonDocument *document_;
  std::string pointer_;
  const nlohmann::json *value_;
};

/// Short description of a JSON value's type for messages ("a string", "an array").
std::string json_type_name(const nlohmann::json &value);

/// The canonical text form of every JSON file syncoll writes: keys in the order the writer put
/// them, two-space indentation, and an array or object of scalars on one line when it fits in
/// 160 columns (a topology link or an MSCCL-IR step per line); a trailing newline. Equal values
/// give byte-identical files.
std::string to_canonical_json(const nlohmann::ordered_json &value);

} // namespace syncoll
