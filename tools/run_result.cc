#include "tools/run_result.h"

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "tools/progress_display.h"

namespace backfill {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

std::string FloatNumber(float value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  const std::to_chars_result result =
      std::to_chars(buffer, buffer + sizeof(buffer), value);
  assert(result.ec == std::errc());
  return std::string(buffer, result.ptr);
}

// The message's fields in field-number order (the descriptor's is the
// declaration order).
std::vector<const FieldDescriptor*> FieldsByNumber(const Message& message) {
  const google::protobuf::Descriptor& descriptor = *message.GetDescriptor();
  std::vector<const FieldDescriptor*> fields;
  for (int i = 0; i < descriptor.field_count(); ++i) {
    fields.push_back(descriptor.field(i));
  }
  std::sort(fields.begin(), fields.end(),
            [](const FieldDescriptor* a, const FieldDescriptor* b) {
              return a->number() < b->number();
            });
  return fields;
}

// One value of `field`: the singular value when index < 0, else the
// index-th element of the repeated field.
void AppendValue(const Message& message, const FieldDescriptor& field,
                 int index, std::string* out) {
  const Reflection& r = *message.GetReflection();
  const bool repeated = index >= 0;
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      *out += (repeated ? r.GetRepeatedBool(message, &field, index)
                        : r.GetBool(message, &field))
                  ? "true"
                  : "false";
      return;
    case FieldDescriptor::CPPTYPE_INT32:
      absl::StrAppend(out, repeated ? r.GetRepeatedInt32(message, &field, index)
                                    : r.GetInt32(message, &field));
      return;
    case FieldDescriptor::CPPTYPE_INT64:
      absl::StrAppend(out, repeated ? r.GetRepeatedInt64(message, &field, index)
                                    : r.GetInt64(message, &field));
      return;
    case FieldDescriptor::CPPTYPE_UINT32:
      absl::StrAppend(out, repeated
                               ? r.GetRepeatedUInt32(message, &field, index)
                               : r.GetUInt32(message, &field));
      return;
    case FieldDescriptor::CPPTYPE_UINT64:
      absl::StrAppend(out, repeated
                               ? r.GetRepeatedUInt64(message, &field, index)
                               : r.GetUInt64(message, &field));
      return;
    case FieldDescriptor::CPPTYPE_DOUBLE:
      *out += JsonNumber(repeated ? r.GetRepeatedDouble(message, &field, index)
                                  : r.GetDouble(message, &field));
      return;
    case FieldDescriptor::CPPTYPE_FLOAT:
      *out += FloatNumber(repeated ? r.GetRepeatedFloat(message, &field, index)
                                   : r.GetFloat(message, &field));
      return;
    case FieldDescriptor::CPPTYPE_ENUM:
      *out += JsonQuote((repeated ? r.GetRepeatedEnum(message, &field, index)
                                  : r.GetEnum(message, &field))
                            ->name());
      return;
    case FieldDescriptor::CPPTYPE_STRING:
      *out += JsonQuote(repeated ? r.GetRepeatedString(message, &field, index)
                                 : r.GetString(message, &field));
      return;
    case FieldDescriptor::CPPTYPE_MESSAGE:
      *out +=
          ProtoJsonLine(repeated ? r.GetRepeatedMessage(message, &field, index)
                                 : r.GetMessage(message, &field));
      return;
  }
}

struct Row {
  std::string label;
  std::string value;
};

std::string Label(const FieldDescriptor& field) {
  std::string label = field.name();
  if (absl::EndsWith(label, "_ms")) label.resize(label.size() - 3);
  absl::StrReplaceAll({{"_per_second", "/s"}, {"_", " "}}, &label);
  return label;
}

std::string Value(const tools::RunResult& result,
                  const FieldDescriptor& field) {
  const Reflection& r = *result.GetReflection();
  switch (field.cpp_type()) {
    case FieldDescriptor::CPPTYPE_BOOL:
      return r.GetBool(result, &field) ? "yes" : "no";
    case FieldDescriptor::CPPTYPE_INT32:
      return absl::StrCat(r.GetInt32(result, &field));
    case FieldDescriptor::CPPTYPE_INT64:
      return absl::StrCat(r.GetInt64(result, &field));
    case FieldDescriptor::CPPTYPE_UINT32:
      return FormatCount(r.GetUInt32(result, &field));
    case FieldDescriptor::CPPTYPE_UINT64:
      return FormatCount(r.GetUInt64(result, &field));
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      const double value = field.cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE
                               ? r.GetDouble(result, &field)
                               : r.GetFloat(result, &field);
      if (field.name() == "seconds" || field.name() == "backfill_seconds") {
        return FormatDuration(value);
      }
      if (!std::isfinite(value) || value < 0) return "--";
      if (absl::EndsWith(field.name(), "_ms")) {
        return absl::StrFormat("%.1f ms", value);
      }
      if (absl::EndsWith(field.name(), "_per_second")) {
        return FormatCount(static_cast<uint64_t>(std::llround(value)));
      }
      if (absl::EndsWith(field.name(), "_seconds")) {
        return absl::StrFormat("%.3g s", value);
      }
      return absl::StrFormat("%.3g", value);
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      const std::string value = r.GetString(result, &field);
      return value.empty() ? "--" : value;
    }
    case FieldDescriptor::CPPTYPE_ENUM:
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  // result.proto has neither (a test keeps it so); a short form anyway.
  return field.cpp_type() == FieldDescriptor::CPPTYPE_ENUM
             ? r.GetEnum(result, &field)->name()
             : r.GetMessage(result, &field).ShortDebugString();
}

// `text` as lines of at most `width` characters (a longer word alone on
// its line), each indented by two spaces, broken at spaces.
void AppendWrapped(absl::string_view text, size_t width, std::string* out) {
  const size_t room = width > 12 ? width - 2 : 10;
  std::string line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && line.size() + 1 + word.size() > room) {
      absl::StrAppend(out, "  ", line, "\n");
      line.clear();
    }
    if (!line.empty()) line += ' ';
    absl::StrAppend(&line, word);
  }
  if (!line.empty()) absl::StrAppend(out, "  ", line, "\n");
}

}  // namespace

std::string ProtoJsonLine(const Message& message) {
  const Reflection& r = *message.GetReflection();
  std::string out = "{";
  bool first = true;
  for (const FieldDescriptor* field : FieldsByNumber(message)) {
    if (!field->is_repeated() && field->has_presence() &&
        !r.HasField(message, field)) {
      continue;
    }
    if (!first) out += ',';
    first = false;
    out += JsonQuote(field->name());
    out += ':';
    if (field->is_repeated()) {
      out += '[';
      const int size = r.FieldSize(message, field);
      for (int i = 0; i < size; ++i) {
        if (i > 0) out += ',';
        AppendValue(message, *field, i, &out);
      }
      out += ']';
    } else {
      AppendValue(message, *field, -1, &out);
    }
  }
  out += '}';
  return out;
}

std::string RunResultJson(const tools::RunResult& result) {
  return ProtoJsonLine(result);
}

std::string FormatSummaryTable(const tools::RunResult& result) {
  std::string verdict = result.consistent() ? "CONSISTENT" : "INCONSISTENT";
  if (result.interrupted()) verdict = "INTERRUPTED";
  if (result.has_error()) verdict = "ERROR";
  std::vector<Row> rows = {{"verdict", verdict}};
  const Reflection& r = *result.GetReflection();
  for (const FieldDescriptor* field : FieldsByNumber(result)) {
    if (field->is_repeated()) continue;  // None in result.proto.
    if (field->has_presence() && !r.HasField(result, field)) continue;
    rows.push_back({Label(*field), Value(result, *field)});
  }
  // A value longer than this (an error's message) goes on lines of its
  // own below its label, wrapped at the table's width, instead of
  // stretching every row.
  constexpr size_t kMaxInlineValue = 48;
  size_t label_width = 0;
  size_t value_width = 0;
  for (const Row& row : rows) {
    label_width = std::max(label_width, row.label.size());
    if (row.value.size() <= kMaxInlineValue) {
      value_width = std::max(value_width, row.value.size());
    }
  }
  std::string title = "Backfill summary";
  if (!result.scenario().empty()) {
    absl::StrAppend(&title, " (", result.scenario(), ")");
  }
  const size_t line_width =
      std::max(label_width + 2 + value_width, title.size());
  std::string out = title + "\n";
  out.append(line_width, '-');
  out += '\n';
  for (const Row& row : rows) {
    if (row.value.size() > kMaxInlineValue) {
      out += row.label + "\n";
      AppendWrapped(row.value, line_width, &out);
      continue;
    }
    std::string line = row.label;
    line.append(line_width - row.label.size() - row.value.size(), ' ');
    line += row.value;
    out += line + "\n";
  }
  return out;
}

}  // namespace backfill
