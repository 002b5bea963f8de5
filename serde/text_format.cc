#include "serde/text_format.h"

#include <cassert>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "serde/internal/scalar_text.h"

namespace backfill {
namespace {

using serde_internal::InvalidText;

bool IsSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

// A LIST element (or, with `colon`, a MAP key or scalar value) is quoted
// when its text is empty, "null" in any case, or holds a special character.
bool NeedsListQuote(absl::string_view text, bool colon) {
  if (text.empty() || absl::EqualsIgnoreCase(text, "null")) return true;
  for (char c : text) {
    if (c == '"' || c == '\\' || c == ',' || c == '{' || c == '}' ||
        IsSpace(c) || (colon && c == ':')) {
      return true;
    }
  }
  return false;
}

void AppendListQuoted(absl::string_view text, std::string* out) {
  out->push_back('"');
  for (char c : text) {
    if (c == '"' || c == '\\') out->push_back('\\');
    out->push_back(c);
  }
  out->push_back('"');
}

bool NeedsStructQuote(absl::string_view text) {
  if (text.empty()) return true;
  for (char c : text) {
    if (c == '"' || c == '\\' || c == ',' || c == '(' || c == ')' ||
        IsSpace(c)) {
      return true;
    }
  }
  return false;
}

void AppendStructQuoted(absl::string_view text, std::string* out) {
  out->push_back('"');
  for (char c : text) {
    if (c == '"' || c == '\\') out->push_back(c);  // doubled
    out->push_back(c);
  }
  out->push_back('"');
}

// LIST and MAP values inside a MAP are written unquoted (their braces
// delimit them); a LIST's LIST elements too.
bool IsBraced(const ColumnType& type) {
  return type.id() == DataType::kList || type.id() == DataType::kMap;
}

void AppendText(const Datum& datum, const ColumnType& type, std::string* out);

// How a nested value's element, field, key or value text is quoted.
enum class Quote {
  kNever,        // a LIST inside a LIST, a LIST or MAP value in a MAP
  kListElement,  // NeedsListQuote, AppendListQuoted
  kMapItem,      // the same, also when the text holds ':'
  kStructField,  // NeedsStructQuote, AppendStructQuoted
};

// Appends the text of non-NULL `datum` in place and re-writes it quoted
// only when `quote` asks for that (no temporary string otherwise).
void AppendItem(const Datum& datum, const ColumnType& type, Quote quote,
                std::string* out) {
  const size_t start = out->size();
  AppendText(datum, type, out);
  if (quote == Quote::kNever) return;
  const absl::string_view text = absl::string_view(*out).substr(start);
  const bool needed = quote == Quote::kStructField
                          ? NeedsStructQuote(text)
                          : NeedsListQuote(text, quote == Quote::kMapItem);
  if (!needed) return;
  const std::string raw(text);
  out->resize(start);
  if (quote == Quote::kStructField) {
    AppendStructQuoted(raw, out);
  } else {
    AppendListQuoted(raw, out);
  }
}

void AppendText(const Datum& datum, const ColumnType& type, std::string* out) {
  switch (type.id()) {
    case DataType::kList: {
      out->push_back('{');
      bool first = true;
      for (const Datum& element : std::get<ListValue>(datum).elements) {
        if (!first) out->push_back(',');
        first = false;
        if (IsNull(element)) {
          out->append("NULL");
          continue;
        }
        AppendItem(element, type.element(),
                   type.element().id() == DataType::kList ? Quote::kNever
                                                          : Quote::kListElement,
                   out);
      }
      out->push_back('}');
      return;
    }
    case DataType::kStruct: {
      out->push_back('(');
      const std::vector<Datum>& fields = std::get<StructValue>(datum).fields;
      for (size_t i = 0; i < fields.size(); ++i) {
        if (i > 0) out->push_back(',');
        if (IsNull(fields[i])) continue;
        AppendItem(fields[i], type.fields()[i].type, Quote::kStructField, out);
      }
      out->push_back(')');
      return;
    }
    case DataType::kMap: {
      out->push_back('{');
      bool first = true;
      for (const MapEntry& entry : std::get<MapValue>(datum).entries) {
        if (!first) out->push_back(',');
        first = false;
        AppendItem(entry.key, type.map_key(), Quote::kMapItem, out);
        out->push_back(':');
        if (IsNull(entry.value)) {
          out->append("NULL");
          continue;
        }
        AppendItem(entry.value, type.map_value(),
                   IsBraced(type.map_value()) ? Quote::kNever : Quote::kMapItem,
                   out);
      }
      out->push_back('}');
      return;
    }
    default:
      serde_internal::AppendScalarText(datum, type.id(), out);
  }
}

// ---- Input --------------------------------------------------------------


absl::Status ParseText(absl::string_view text, size_t base,
                       const ColumnType& type, Datum* out);

void SkipSpace(absl::string_view text, size_t* pos) {
  while (*pos < text.size() && IsSpace(text[*pos])) ++*pos;
}

// A double-quoted string at *pos (which is at the '"'): backslash escapes
// the next byte; with `doubled_quotes` (STRUCT fields) "" is a quote too.
// Leaves *pos after the closing quote.
bool ReadQuoted(absl::string_view text, size_t* pos, bool doubled_quotes,
                std::string* value) {
  ++*pos;
  while (*pos < text.size()) {
    const char c = text[(*pos)++];
    if (c == '\\') {
      if (*pos >= text.size()) return false;
      value->push_back(text[(*pos)++]);
    } else if (c == '"') {
      if (doubled_quotes && *pos < text.size() && text[*pos] == '"') {
        value->push_back('"');
        ++*pos;
      } else {
        return true;
      }
    } else {
      value->push_back(c);
    }
  }
  return false;
}

// The end (after the matching '}') of the braced text at `pos`, skipping
// quoted parts (a backslash escapes the next byte inside quotes); npos if
// it does not close. Unquoted braces inside a LIST or MAP text are always
// those of nested LISTs and MAPs: every other element with a brace is
// quoted.
size_t ScanBraced(absl::string_view text, size_t pos) {
  int depth = 0;
  bool quoted = false;
  for (; pos < text.size(); ++pos) {
    const char c = text[pos];
    if (quoted) {
      if (c == '\\') {
        ++pos;
      } else if (c == '"') {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth == 0) return pos + 1;
    }
  }
  return absl::string_view::npos;
}

// An unquoted token: up to a byte in `stops` or white space.
absl::string_view ReadToken(absl::string_view text, size_t* pos,
                            absl::string_view stops) {
  const size_t start = *pos;
  while (*pos < text.size() && !IsSpace(text[*pos]) &&
         stops.find(text[*pos]) == absl::string_view::npos) {
    ++*pos;
  }
  return text.substr(start, *pos - start);
}

// One LIST element, MAP key or MAP value at *pos: quoted, braced (when
// `braced` and the type is a LIST or MAP), NULL, or an unquoted token ending
// at one of `stops`.
absl::Status ParseElement(absl::string_view text, size_t base, size_t* pos,
                          const ColumnType& container,
                          const ColumnType& type, bool braced,
                          absl::string_view stops, Datum* out) {
  const size_t start = *pos;
  if (start >= text.size()) {
    return InvalidText(container, base + start, "expected an element");
  }
  if (text[start] == '"') {
    std::string value;
    if (!ReadQuoted(text, pos, /*doubled_quotes=*/false, &value)) {
      return InvalidText(container, base + start, "unterminated quoted element");
    }
    return ParseText(value, base + start + 1, type, out);
  }
  if (braced && text[start] == '{' && IsBraced(type)) {
    const size_t end = ScanBraced(text, start);
    if (end == absl::string_view::npos) {
      return InvalidText(container, base + start, "unbalanced nested value");
    }
    *pos = end;
    return ParseText(text.substr(start, end - start), base + start, type, out);
  }
  const absl::string_view token = ReadToken(text, pos, stops);
  if (token.empty()) {
    return InvalidText(container, base + start, "expected an element");
  }
  if (absl::EqualsIgnoreCase(token, "null")) {
    out->emplace<std::monostate>();
    return absl::OkStatus();
  }
  return ParseText(token, base + start, type, out);
}

// The frame shared by LIST and MAP text: '{', items separated by ',', '}',
// white space around each, nothing after. `parse_item(&pos)` reads one item
// starting at text[pos] (after white space) and advances pos past it.
template <class ParseItem>
absl::Status ParseBracedItems(absl::string_view text, size_t base,
                              const ColumnType& type, ParseItem parse_item) {
  size_t pos = 0;
  SkipSpace(text, &pos);
  if (pos >= text.size() || text[pos] != '{') {
    return InvalidText(type, base + pos, "expected '{'");
  }
  ++pos;
  SkipSpace(text, &pos);
  if (pos < text.size() && text[pos] == '}') {
    ++pos;
  } else {
    while (true) {
      SkipSpace(text, &pos);
      if (absl::Status s = parse_item(&pos); !s.ok()) return s;
      SkipSpace(text, &pos);
      if (pos < text.size() && text[pos] == ',') {
        ++pos;
        continue;
      }
      if (pos < text.size() && text[pos] == '}') {
        ++pos;
        break;
      }
      return InvalidText(type, base + pos, "expected ',' or '}'");
    }
  }
  SkipSpace(text, &pos);
  if (pos != text.size()) return InvalidText(type, base + pos, "trailing text");
  return absl::OkStatus();
}

absl::Status ParseList(absl::string_view text, size_t base,
                       const ColumnType& type, Datum* out) {
  ListValue list;
  if (absl::Status s = ParseBracedItems(
          text, base, type,
          [&](size_t* pos) {
            list.elements.emplace_back();
            return ParseElement(
                text, base, pos, type, type.element(),
                /*braced=*/type.element().id() == DataType::kList, ",{}\"\\",
                &list.elements.back());
          });
      !s.ok()) {
    return s;
  }
  *out = std::move(list);
  return absl::OkStatus();
}

absl::Status ParseStruct(absl::string_view text, size_t base,
                         const ColumnType& type, Datum* out) {
  size_t pos = 0;
  if (text.empty() || text[0] != '(') {
    return InvalidText(type, base, "expected '('");
  }
  ++pos;
  const absl::Span<const StructField> fields = type.fields();
  StructValue value;
  value.fields.resize(fields.size());
  for (size_t i = 0; i < fields.size(); ++i) {
    const size_t start = pos;
    if (pos < text.size() && text[pos] == '"') {
      std::string field;
      if (!ReadQuoted(text, &pos, /*doubled_quotes=*/true, &field)) {
        return InvalidText(type, base + start, "unterminated quoted field");
      }
      if (absl::Status s =
              ParseText(field, base + start + 1, fields[i].type,
                        &value.fields[i]);
          !s.ok()) {
        return s;
      }
    } else {
      while (pos < text.size() && text[pos] != ',' && text[pos] != ')') ++pos;
      if (pos > start) {  // empty: NULL
        if (absl::Status s =
                ParseText(text.substr(start, pos - start), base + start,
                          fields[i].type, &value.fields[i]);
            !s.ok()) {
          return s;
        }
      }
    }
    const char expected = i + 1 < fields.size() ? ',' : ')';
    if (pos >= text.size() || text[pos] != expected) {
      return InvalidText(type, base + pos,
                     absl::StrCat("expected '", std::string(1, expected),
                                  "'"));
    }
    ++pos;
  }
  if (fields.empty()) {
    if (pos >= text.size() || text[pos] != ')') {
      return InvalidText(type, base + pos, "expected ')'");
    }
    ++pos;
  }
  if (pos != text.size()) return InvalidText(type, base + pos, "trailing text");
  *out = std::move(value);
  return absl::OkStatus();
}

absl::Status ParseMap(absl::string_view text, size_t base,
                      const ColumnType& type, Datum* out) {
  std::vector<MapEntry> entries;
  if (absl::Status s = ParseBracedItems(
          text, base, type,
          [&](size_t* pos) {
            MapEntry entry;
            const size_t key_start = *pos;
            if (absl::Status key =
                    ParseElement(text, base, pos, type, type.map_key(),
                                 /*braced=*/false, ":,{}\"\\", &entry.key);
                !key.ok()) {
              return key;
            }
            if (IsNull(entry.key)) {
              return InvalidText(type, base + key_start,
                                 "map keys must not be NULL");
            }
            SkipSpace(text, pos);
            if (*pos >= text.size() || text[*pos] != ':') {
              return InvalidText(type, base + *pos, "expected ':'");
            }
            ++*pos;
            SkipSpace(text, pos);
            if (absl::Status value =
                    ParseElement(text, base, pos, type, type.map_value(),
                                 /*braced=*/true, ":,{}\"\\", &entry.value);
                !value.ok()) {
              return value;
            }
            entries.push_back(std::move(entry));
            return absl::OkStatus();
          });
      !s.ok()) {
    return s;
  }
  absl::StatusOr<MapValue> map = MakeMapValue(std::move(entries));
  if (!map.ok()) return InvalidText(type, base, map.status().message());
  *out = *std::move(map);
  return absl::OkStatus();
}

absl::Status ParseText(absl::string_view text, size_t base,
                       const ColumnType& type, Datum* out) {
  switch (type.id()) {
    case DataType::kList:
      return ParseList(text, base, type, out);
    case DataType::kStruct:
      return ParseStruct(text, base, type, out);
    case DataType::kMap:
      return ParseMap(text, base, type, out);
    default:
      return serde_internal::ParseScalarText(text, base, type, out);
  }
}

}  // namespace

std::string FormatDatumText(const Datum& datum, const ColumnType& type) {
  std::string out;
  AppendDatumText(datum, type, &out);
  return out;
}

void AppendDatumText(const Datum& datum, const ColumnType& type,
                     std::string* out) {
  assert(!IsNull(datum) && DatumMatchesColumnType(datum, type));
  if (IsNull(datum)) {
    out->append("NULL");
    return;
  }
  AppendText(datum, type, out);
}

absl::StatusOr<Datum> ParseDatumText(absl::string_view text,
                                     const ColumnType& type) {
  Datum out;
  if (absl::Status s = ParseText(text, 0, type, &out); !s.ok()) return s;
  return out;
}

}  // namespace backfill
