#include "model/json_document.h"

#include "model/invariant.h"

#include <algorithm>
#include <fmt/format.h>
#include <fstream>
#include <sstream>

namespace syncoll {
namespace {

std::string escape_pointer_token(const std::string &token) {
  std::string out;
  for (char c : token) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

void append_utf8(std::string &out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Walks text that nlohmann already accepted, recording the line and column where each value
// starts. Because the text is known to be valid JSON the walker needs no error handling.
class PositionScanner {
public:
  PositionScanner(std::string_view text, std::map<std::string, std::pair<int, int>> &out)
      : text_(text), out_(out) {}

  void run() {
    // nlohmann skips a UTF-8 byte order mark; so must the walker, or positions shift.
    if (text_.substr(0, 3) == "\xEF\xBB\xBF")
      pos_ = 3;
    skip_space();
    value("");
  }

private:
  std::string_view text_;
  std::map<std::string, std::pair<int, int>> &out_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;

  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void advance() {
    if (text_[pos_] == '\n') {
      ++line_;
      column_ = 1;
    } else if ((static_cast<unsigned char>(text_[pos_]) & 0xC0) != 0x80) {
      ++column_; // count code points, not UTF-8 continuation bytes
    }
    ++pos_;
  }
  void skip_space() {
    while (pos_ < text_.size() &&
           (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      advance();
  }

  std::string string_token() {
    advance(); // opening quote
    std::string out;
    while (peek() != '"') {
      if (peek() == '\\') {
        advance();
        char esc = peek();
        advance();
        switch (esc) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          uint32_t cp = std::stoul(std::string(text_.substr(pos_, 4)), nullptr, 16);
          for (int i = 0; i < 4; ++i)
            advance();
          if (cp >= 0xD800 && cp < 0xDC00 && peek() == '\\') {
            advance();
            advance();
            uint32_t low = std::stoul(std::string(text_.substr(pos_, 4)), nullptr, 16);
            for (int i = 0; i < 4; ++i)
              advance();
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          out += esc;
          break;
        }
      } else {
        out += peek();
        advance();
      }
    }
    advance(); // closing quote
    return out;
  }

  void value(const std::string &pointer) {
    out_.emplace(pointer, std::make_pair(line_, column_));
    char c = peek();
    if (c == '{') {
      advance();
      skip_space();
      while (peek() != '}') {
        std::string key = string_token();
        skip_space();
        advance(); // ':'
        skip_space();
        value(pointer + "/" + escape_pointer_token(key));
        skip_space();
        if (peek() == ',') {
          advance();
          skip_space();
        }
      }
      advance();
    } else if (c == '[') {
      advance();
      skip_space();
      size_t index = 0;
      while (peek() != ']') {
        value(pointer + "/" + std::to_string(index++));
        skip_space();
        if (peek() == ',') {
          advance();
          skip_space();
        }
      }
      advance();
    } else if (c == '"') {
      string_token();
    } else {
      while (pos_ < text_.size() && peek() != ',' && peek() != '}' && peek() != ']' &&
             peek() != ' ' && peek() != '\n' && peek() != '\t' && peek() != '\r')
        advance();
    }
  }
};

// nlohmann's messages read "[json.exception.parse_error.101] parse error at line 3, column 5:
// syntax error while parsing ..."; keep the rest as the message. The location comes from the
// byte the parser stopped at, counted in the text: nlohmann's own column is 0 when that byte is
// a line break, and some errors carry no line at all.
Diagnostic parse_error_diagnostic(const nlohmann::json::parse_error &e, std::string_view text,
                                  const std::string &file) {
  std::string what = e.what();
  std::string message = what;
  if (auto at = what.find(" at line "); at != std::string::npos) {
    if (auto colon = what.find(": ", at); colon != std::string::npos)
      message = what.substr(colon + 2);
  } else if (auto bracket = what.find("] "); bracket != std::string::npos) {
    message = what.substr(bracket + 2);
  }
  // e.byte counts from 1; the offending byte is the last one read (the end for an early end).
  const size_t stop = e.byte > 0 ? size_t(e.byte - 1) : size_t(0);
  return {Severity::Error, location_at(text, file, stop), "invalid JSON: " + message, {}};
}

Diagnostic value_error_diagnostic(const nlohmann::json::exception &e, std::string_view text,
                                  const std::string &file) {
  std::string message = e.what();
  if (auto bracket = message.find("] "); bracket != std::string::npos)
    message = message.substr(bracket + 2);
  size_t at = 0;
  const auto open = message.find('\''), close = message.rfind('\'');
  if (open != std::string::npos && close > open + 1)
    at = std::min(text.size(), text.find(message.substr(open + 1, close - open - 1)));
  return {Severity::Error, location_at(text, file, at), "invalid JSON: " + message, {}};
}

} // namespace

Expected<JsonDocument> JsonDocument::parse(std::string_view text, std::string file_name) {
  JsonDocument doc;
  doc.file_ = std::move(file_name);
  try {
    doc.root_ = nlohmann::json::parse(text.begin(), text.end());
  } catch (const nlohmann::json::parse_error &e) {
    return tl::unexpected(Diagnostics(parse_error_diagnostic(e, text, doc.file_)));
  } catch (const nlohmann::json::exception &e) {
    // A number too large for a double ("number overflow parsing '3e999'"): no byte position
    // comes with it, so the quoted token is looked up in the text.
    return tl::unexpected(Diagnostics(value_error_diagnostic(e, text, doc.file_)));
  }
  doc.text_ = std::string(text);
  return doc;
}

Expected<JsonDocument> JsonDocument::read_file(const std::string &path) {
  SYNCOLL_TRY(text, read_text_file(path));
  return parse(text, path);
}

SourceLocation JsonDocument::location(const std::string &pointer) const {
  if (!positions_) {
    positions_.emplace();
    PositionScanner(text_, *positions_).run();
  }
  std::string p = pointer;
  while (true) {
    if (auto it = positions_->find(p); it != positions_->end())
      return {file_, it->second.first, it->second.second};
    if (p.empty())
      return {file_, 0, 0};
    p = p.substr(0, p.rfind('/'));
  }
}

JsonView JsonDocument::root() const {
  return JsonView(*this, "", root_);
}

std::string json_type_name(const nlohmann::json &value) {
  switch (value.type()) {
  case nlohmann::json::value_t::null:
    return "null";
  case nlohmann::json::value_t::object:
    return "an object";
  case nlohmann::json::value_t::array:
    return "an array";
  case nlohmann::json::value_t::string:
    return "a string";
  case nlohmann::json::value_t::boolean:
    return "a boolean";
  case nlohmann::json::value_t::number_integer:
  case nlohmann::json::value_t::number_unsigned:
    return "an integer";
  case nlohmann::json::value_t::number_float:
    return "a number";
  case nlohmann::json::value_t::binary:
    return "binary data";
  case nlohmann::json::value_t::discarded:
    return "nothing";
  }
  return "a value";
}

Expected<JsonView> JsonView::member(const std::string &key) const {
  if (!value_->is_object())
    return error(
        fmt::format("expected an object with key '{}', found {}", key, json_type_name(*value_)));
  auto it = value_->find(key);
  if (it == value_->end())
    return error(fmt::format("missing key '{}'", key));
  return JsonView(*document_, pointer_ + "/" + escape_pointer_token(key), *it);
}

std::optional<JsonView> JsonView::optional_member(const std::string &key) const {
  if (!value_->is_object())
    return std::nullopt;
  auto it = value_->find(key);
  if (it == value_->end())
    return std::nullopt;
  return JsonView(*document_, pointer_ + "/" + escape_pointer_token(key), *it);
}

Expected<std::vector<JsonView>> JsonView::elements() const {
  if (!value_->is_array())
    return error(fmt::format("expected an array, found {}", json_type_name(*value_)));
  std::vector<JsonView> out;
  out.reserve(value_->size());
  for (size_t i = 0; i < value_->size(); ++i)
    out.emplace_back(*document_, pointer_ + "/" + std::to_string(i), (*value_)[i]);
  return out;
}

Expected<std::vector<std::pair<std::string, JsonView>>> JsonView::members() const {
  if (!value_->is_object())
    return error(fmt::format("expected an object, found {}", json_type_name(*value_)));
  std::vector<std::pair<std::string, JsonView>> out;
  for (auto it = value_->begin(); it != value_->end(); ++it)
    out.emplace_back(it.key(), JsonView(*document_, pointer_ + "/" + escape_pointer_token(it.key()),
                                        it.value()));
  return out;
}

Expected<void> JsonView::only_keys(std::initializer_list<std::string_view> allowed) const {
  if (!value_->is_object())
    return error(fmt::format("expected an object, found {}", json_type_name(*value_)));
  for (auto it = value_->begin(); it != value_->end(); ++it) {
    bool known = false;
    for (auto a : allowed)
      known = known || a == it.key();
    if (!known) {
      std::string list;
      for (auto a : allowed)
        list += (list.empty() ? "" : ", ") + std::string(a);
      return JsonView(*document_, pointer_ + "/" + escape_pointer_token(it.key()), it.value())
          .error(fmt::format("unknown key '{}' (expected one of: {})", it.key(), list));
    }
  }
  return {};
}

Expected<int64_t> JsonView::as_int(int64_t min, int64_t max) const {
  if (!value_->is_number_integer())
    return error(fmt::format("expected an integer, found {}", json_type_name(*value_)));
  if (value_->is_number_unsigned() && value_->get<uint64_t>() > uint64_t(INT64_MAX))
    return error(fmt::format("integer {} is out of range [{}, {}]", value_->dump(), min, max));
  int64_t v = value_->get<int64_t>();
  if (v < min || v > max)
    return error(fmt::format("value {} is out of range [{}, {}]", v, min, max));
  return v;
}

Expected<double> JsonView::as_number(double min, double max) const {
  if (!value_->is_number())
    return error(fmt::format("expected a number, found {}", json_type_name(*value_)));
  double v = value_->get<double>();
  if (!(v >= min && v <= max))
    return error(fmt::format("value {} is out of range [{}, {}]", value_->dump(), min, max));
  return v;
}

Expected<std::string> JsonView::as_string() const {
  if (!value_->is_string())
    return error(fmt::format("expected a string, found {}", json_type_name(*value_)));
  return value_->get<std::string>();
}

Expected<bool> JsonView::as_bool() const {
  if (!value_->is_boolean())
    return error(fmt::format("expected a boolean, found {}", json_type_name(*value_)));
  return value_->get<bool>();
}

namespace {
void write_canonical(const nlohmann::ordered_json &v, int indent, std::string &out) {
  if (!v.is_structured() || v.empty()) {
    out += v.dump();
    return;
  }
  bool flat = true;
  for (const auto &e : v)
    flat = flat && !e.is_structured();
  if (flat) {
    std::string one_line = v.dump(-1, ' ', false);
    // nlohmann's compact form has no spaces after ',' and ':'; add them for readability.
    std::string spaced;
    bool in_string = false;
    for (size_t i = 0; i < one_line.size(); ++i) {
      char c = one_line[i];
      spaced += c;
      if (c == '"' && (i == 0 || one_line[i - 1] != '\\'))
        in_string = !in_string;
      if (!in_string && (c == ',' || c == ':'))
        spaced += ' ';
    }
    if (static_cast<size_t>(indent) + spaced.size() <= 160) {
      out += spaced;
      return;
    }
  }
  const std::string pad(static_cast<size_t>(indent) + 2, ' ');
  out += v.is_object() ? "{\n" : "[\n";
  bool first = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!first)
      out += ",\n";
    first = false;
    out += pad;
    if (v.is_object())
      out += nlohmann::ordered_json(it.key()).dump() + ": ";
    write_canonical(*it, indent + 2, out);
  }
  out += "\n" + std::string(static_cast<size_t>(indent), ' ') + (v.is_object() ? "}" : "]");
}
} // namespace

std::string to_canonical_json(const nlohmann::ordered_json &value) {
  std::string out;
  write_canonical(value, 0, out);
  return out + "\n";
}

} // namespace syncoll
