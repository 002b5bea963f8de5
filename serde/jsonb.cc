#include "serde/jsonb.h"

#include <algorithm>
#include <cassert>
#include <cstdio>

#include "absl/strings/str_cat.h"
#include "serde/utf8.h"

namespace backfill {

struct Jsonb::Node {
  std::string text;  // number (canonical) or string
  std::vector<Jsonb> elements;
  std::vector<JsonbMember> members;
};

namespace {

// PostgreSQL's jsonb key order: length first, then bytes.
bool KeyLess(absl::string_view a, absl::string_view b) {
  if (a.size() != b.size()) return a.size() < b.size();
  return a < b;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Reads a JSON number at the front of `text`: sets *consumed and
// *canonical, or returns the error (the offset relative to `text`) via
// *error_offset / *error.
bool ParseNumber(absl::string_view text, size_t* consumed,
                 std::string* canonical, size_t* error_offset,
                 std::string* error) {
  size_t i = 0;
  auto fail = [&](size_t at, absl::string_view what) {
    *error_offset = at;
    *error = std::string(what);
    return false;
  };
  const bool negative = i < text.size() && text[i] == '-';
  if (negative) ++i;
  std::string digits;
  if (i >= text.size() || !IsDigit(text[i])) return fail(i, "expected a digit");
  if (text[i] == '0') {
    digits.push_back('0');
    ++i;
  } else {
    while (i < text.size() && IsDigit(text[i])) digits.push_back(text[i++]);
  }
  int64_t fraction_digits = 0;
  if (i < text.size() && text[i] == '.') {
    ++i;
    if (i >= text.size() || !IsDigit(text[i])) {
      return fail(i, "expected a digit after '.'");
    }
    while (i < text.size() && IsDigit(text[i])) {
      digits.push_back(text[i++]);
      ++fraction_digits;
    }
  }
  int64_t exponent = 0;
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool exponent_negative = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) {
      exponent_negative = text[i] == '-';
      ++i;
    }
    if (i >= text.size() || !IsDigit(text[i])) {
      return fail(i, "expected an exponent digit");
    }
    const size_t exponent_start = i;
    while (i < text.size() && IsDigit(text[i])) {
      exponent = std::min<int64_t>(exponent * 10 + (text[i++] - '0'),
                                   int64_t{1} << 40);
    }
    if (exponent > Jsonb::kMaxNumberExponent) {
      return fail(exponent_start, "number exponent out of range");
    }
    if (exponent_negative) exponent = -exponent;
  }
  // digits x 10^(exponent - fraction_digits); `scale` digits after the point.
  const int64_t scale = fraction_digits - exponent;
  if (scale > Jsonb::kMaxNumberScale) {
    return fail(0, "number has too many digits after the point");
  }
  std::string integer, fraction;
  const int64_t n = static_cast<int64_t>(digits.size());
  if (scale <= 0) {
    integer = digits + std::string(static_cast<size_t>(-scale), '0');
  } else if (scale >= n) {
    integer = "0";
    fraction = std::string(static_cast<size_t>(scale - n), '0') + digits;
  } else {
    integer = digits.substr(0, static_cast<size_t>(n - scale));
    fraction = digits.substr(static_cast<size_t>(n - scale));
  }
  const size_t first_nonzero = integer.find_first_not_of('0');
  integer = first_nonzero == std::string::npos ? "0"
                                               : integer.substr(first_nonzero);
  const bool zero = integer == "0" &&
                    fraction.find_first_not_of('0') == std::string::npos;
  canonical->clear();
  if (negative && !zero) canonical->push_back('-');
  canonical->append(integer);
  if (!fraction.empty()) {
    canonical->push_back('.');
    canonical->append(fraction);
  }
  *consumed = i;
  return true;
}

void AppendQuoted(absl::string_view s, std::string* out) {
  out->push_back('"');
  for (char c : s) {
    switch (c) {
      case '"':
        out->append("\\\"");
        break;
      case '\\':
        out->append("\\\\");
        break;
      case '\b':
        out->append("\\b");
        break;
      case '\f':
        out->append("\\f");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buffer[8];
          std::snprintf(buffer, sizeof(buffer), "\\u%04x",
                        static_cast<unsigned>(c));
          out->append(buffer);
        } else {
          out->push_back(c);
        }
    }
  }
  out->push_back('"');
}

}  // namespace

// Friend of Jsonb (jsonb.h): builds numbers from text it has canonicalised.
class JsonbParser {
 public:
  explicit JsonbParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<Jsonb> ParseDocument() {
    Jsonb value;
    if (!ParseValue(0, &value)) return Error();
    SkipWhitespace();
    if (pos_ != text_.size()) {
      Fail(pos_, "expected the end of the input");
      return Error();
    }
    return value;
  }

 private:
  bool Fail(size_t offset, absl::string_view what) {
    error_offset_ = offset;
    error_ = std::string(what);
    return false;
  }
  absl::Status Error() const {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid JSONB at offset ", error_offset_, ": ", error_));
  }

  void SkipWhitespace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Literal(absl::string_view word) {
    if (text_.substr(pos_, word.size()) != word) {
      return Fail(pos_, absl::StrCat("expected '", word, "'"));
    }
    pos_ += word.size();
    return true;
  }

  bool ParseValue(int depth, Jsonb* out) {
    SkipWhitespace();
    if (pos_ >= text_.size()) return Fail(pos_, "expected a value");
    switch (text_[pos_]) {
      case 'n':
        *out = Jsonb();
        return Literal("null");
      case 't':
        *out = Jsonb::Bool(true);
        return Literal("true");
      case 'f':
        *out = Jsonb::Bool(false);
        return Literal("false");
      case '"': {
        std::string s;
        if (!ParseString(&s)) return false;
        *out = Jsonb::String(std::move(s));
        return true;
      }
      case '[':
      case '{':
        if (depth >= Jsonb::kMaxDepth) {
          return Fail(pos_, absl::StrCat("nested deeper than ",
                                         Jsonb::kMaxDepth));
        }
        return text_[pos_] == '[' ? ParseArray(depth, out)
                                  : ParseObject(depth, out);
      default: {
        if (text_[pos_] != '-' && !IsDigit(text_[pos_])) {
          return Fail(pos_, "expected a value");
        }
        size_t consumed = 0, error_offset = 0;
        std::string canonical, error;
        if (!ParseNumber(text_.substr(pos_), &consumed, &canonical,
                         &error_offset, &error)) {
          return Fail(pos_ + error_offset, error);
        }
        *out = Jsonb::CanonicalNumber(std::move(canonical));
        pos_ += consumed;
        return true;
      }
    }
  }

  bool ParseArray(int depth, Jsonb* out) {
    ++pos_;  // '['
    std::vector<Jsonb> elements;
    SkipWhitespace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      *out = Jsonb::Array(std::move(elements));
      return true;
    }
    while (true) {
      Jsonb element;
      if (!ParseValue(depth + 1, &element)) return false;
      elements.push_back(std::move(element));
      SkipWhitespace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        *out = Jsonb::Array(std::move(elements));
        return true;
      }
      return Fail(pos_, "expected ',' or ']'");
    }
  }

  bool ParseObject(int depth, Jsonb* out) {
    ++pos_;  // '{'
    std::vector<JsonbMember> members;
    SkipWhitespace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      *out = Jsonb::Object(std::move(members));
      return true;
    }
    while (true) {
      SkipWhitespace();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        return Fail(pos_, "expected a string key");
      }
      JsonbMember member;
      if (!ParseString(&member.key)) return false;
      SkipWhitespace();
      if (pos_ >= text_.size() || text_[pos_] != ':') {
        return Fail(pos_, "expected ':'");
      }
      ++pos_;
      if (!ParseValue(depth + 1, &member.value)) return false;
      members.push_back(std::move(member));
      SkipWhitespace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        *out = Jsonb::Object(std::move(members));
        return true;
      }
      return Fail(pos_, "expected ',' or '}'");
    }
  }

  // Four hex digits at pos_.
  bool ParseHex4(uint32_t* value) {
    if (pos_ + 4 > text_.size()) return Fail(pos_, "expected 4 hex digits");
    *value = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_ + i];
      uint32_t digit;
      if (c >= '0' && c <= '9') {
        digit = c - '0';
      } else if (c >= 'a' && c <= 'f') {
        digit = c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        digit = c - 'A' + 10;
      } else {
        return Fail(pos_ + i, "expected a hex digit");
      }
      *value = *value * 16 + digit;
    }
    pos_ += 4;
    return true;
  }

  bool ParseString(std::string* out) {
    ++pos_;  // '"'
    while (true) {
      if (pos_ >= text_.size()) return Fail(pos_, "unterminated string");
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return Fail(pos_, "control character in a string");
      if (c >= 0x80) {
        const size_t length = Utf8SequenceLength(text_.substr(pos_));
        if (length == 0) return Fail(pos_, "invalid UTF-8");
        out->append(text_.data() + pos_, length);
        pos_ += length;
        continue;
      }
      if (c != '\\') {
        out->push_back(static_cast<char>(c));
        ++pos_;
        continue;
      }
      const size_t escape_start = pos_;
      ++pos_;
      if (pos_ >= text_.size()) return Fail(pos_, "unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t code_point = 0;
          if (!ParseHex4(&code_point)) return false;
          if (code_point == 0) {
            return Fail(escape_start, "\\u0000 is not supported in JSONB");
          }
          if (code_point >= 0xDC00 && code_point <= 0xDFFF) {
            return Fail(escape_start, "unpaired low surrogate");
          }
          if (code_point >= 0xD800 && code_point <= 0xDBFF) {
            if (text_.substr(pos_, 2) != "\\u") {
              return Fail(pos_, "expected a low surrogate");
            }
            pos_ += 2;
            uint32_t low = 0;
            if (!ParseHex4(&low)) return false;
            if (low < 0xDC00 || low > 0xDFFF) {
              return Fail(pos_ - 6, "expected a low surrogate");
            }
            code_point = 0x10000 + ((code_point - 0xD800) << 10) +
                         (low - 0xDC00);
          }
          AppendUtf8(code_point, out);
          break;
        }
        default:
          return Fail(escape_start, "invalid escape");
      }
    }
  }

  absl::string_view text_;
  size_t pos_ = 0;
  size_t error_offset_ = 0;
  std::string error_;
};

Jsonb Jsonb::Bool(bool value) {
  Jsonb out;
  out.kind_ = Kind::kBool;
  out.bool_ = value;
  return out;
}

Jsonb Jsonb::Int(int64_t value) {
  auto node = std::make_shared<Node>();
  node->text = absl::StrCat(value);
  return Jsonb(Kind::kNumber, std::move(node));
}

absl::StatusOr<Jsonb> Jsonb::Number(absl::string_view json_number) {
  size_t consumed = 0, error_offset = 0;
  std::string canonical, error;
  if (!ParseNumber(json_number, &consumed, &canonical, &error_offset,
                   &error)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid JSONB number at offset ", error_offset, ": ", error));
  }
  if (consumed != json_number.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid JSONB number at offset ", consumed, ": trailing text"));
  }
  return CanonicalNumber(std::move(canonical));
}

Jsonb Jsonb::CanonicalNumber(std::string canonical) {
  auto node = std::make_shared<Node>();
  node->text = std::move(canonical);
  return Jsonb(Kind::kNumber, std::move(node));
}

Jsonb Jsonb::String(std::string value) {
  assert(IsValidUtf8(value) && value.find('\0') == std::string::npos);
  auto node = std::make_shared<Node>();
  node->text = std::move(value);
  return Jsonb(Kind::kString, std::move(node));
}

Jsonb Jsonb::Array(std::vector<Jsonb> elements) {
  auto node = std::make_shared<Node>();
  node->elements = std::move(elements);
  return Jsonb(Kind::kArray, std::move(node));
}

Jsonb Jsonb::Object(std::vector<JsonbMember> members) {
  std::stable_sort(members.begin(), members.end(),
                   [](const JsonbMember& a, const JsonbMember& b) {
                     return KeyLess(a.key, b.key);
                   });
  auto node = std::make_shared<Node>();
  for (JsonbMember& member : members) {
    assert(IsValidUtf8(member.key) &&
           member.key.find('\0') == std::string::npos);
    // Equal keys are adjacent, in input order: the later one replaces.
    if (!node->members.empty() && node->members.back().key == member.key) {
      node->members.back().value = std::move(member.value);
    } else {
      node->members.push_back(std::move(member));
    }
  }
  return Jsonb(Kind::kObject, std::move(node));
}

const std::string& Jsonb::number_text() const {
  assert(kind_ == Kind::kNumber);
  return node_->text;
}

const std::string& Jsonb::string_value() const {
  assert(kind_ == Kind::kString);
  return node_->text;
}

absl::Span<const Jsonb> Jsonb::elements() const {
  if (kind_ != Kind::kArray) return {};
  return node_->elements;
}

absl::Span<const JsonbMember> Jsonb::members() const {
  if (kind_ != Kind::kObject) return {};
  return node_->members;
}

std::string Jsonb::ToString() const {
  std::string out;
  AppendTo(&out);
  return out;
}

void Jsonb::AppendTo(std::string* out) const {
  switch (kind_) {
    case Kind::kNull:
      out->append("null");
      return;
    case Kind::kBool:
      out->append(bool_ ? "true" : "false");
      return;
    case Kind::kNumber:
      out->append(node_->text);
      return;
    case Kind::kString:
      AppendQuoted(node_->text, out);
      return;
    case Kind::kArray:
      out->push_back('[');
      for (size_t i = 0; i < node_->elements.size(); ++i) {
        if (i > 0) out->append(", ");
        node_->elements[i].AppendTo(out);
      }
      out->push_back(']');
      return;
    case Kind::kObject:
      out->push_back('{');
      for (size_t i = 0; i < node_->members.size(); ++i) {
        if (i > 0) out->append(", ");
        AppendQuoted(node_->members[i].key, out);
        out->append(": ");
        node_->members[i].value.AppendTo(out);
      }
      out->push_back('}');
      return;
  }
}

bool operator==(const Jsonb& a, const Jsonb& b) {
  if (a.kind_ != b.kind_) return false;
  switch (a.kind_) {
    case Jsonb::Kind::kNull:
      return true;
    case Jsonb::Kind::kBool:
      return a.bool_ == b.bool_;
    case Jsonb::Kind::kNumber:
    case Jsonb::Kind::kString:
      return a.node_->text == b.node_->text;
    case Jsonb::Kind::kArray:
      return a.node_->elements == b.node_->elements;
    case Jsonb::Kind::kObject:
      return std::equal(a.node_->members.begin(), a.node_->members.end(),
                        b.node_->members.begin(), b.node_->members.end(),
                        [](const JsonbMember& x, const JsonbMember& y) {
                          return x.key == y.key && x.value == y.value;
                        });
  }
  return false;
}

int CompareJsonb(const Jsonb& a, const Jsonb& b) {
  // The canonical text is injective, so structural equality is text equality;
  // this skips building two texts on the common equal case (row comparisons).
  if (a == b) return 0;
  const int c = a.ToString().compare(b.ToString());
  return c < 0 ? -1 : (c > 0 ? 1 : 0);
}

absl::StatusOr<Jsonb> ParseJsonb(absl::string_view text) {
  return JsonbParser(text).ParseDocument();
}

}  // namespace backfill
