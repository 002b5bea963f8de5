#include "executor/testing/message_literal.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "serde/decimal.h"

namespace backfill {
namespace testing {
namespace {

struct TypeLetter {
  absl::string_view letter;
  DataType type;
};
constexpr TypeLetter kTypeLetters[] = {
    {"I", DataType::kInt64},   {"i", DataType::kInt32},
    {"h", DataType::kInt16},   {"F", DataType::kFloat64},
    {"f", DataType::kFloat32}, {"B", DataType::kBoolean},
    {"T", DataType::kVarchar}, {"x", DataType::kBytea},
    {"D", DataType::kDecimal}, {"dt", DataType::kDate},
    {"tm", DataType::kTime},   {"ts", DataType::kTimestamp},
};

absl::StatusOr<DataType> ParseType(absl::string_view token) {
  for (const TypeLetter& entry : kTypeLetters) {
    if (entry.letter == token) return entry.type;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown column type letter '", token, "'"));
}

std::vector<absl::string_view> Tokens(absl::string_view line) {
  return absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
}

absl::StatusOr<Op> ParseOp(absl::string_view token) {
  if (token == "+") return Op::kInsert;
  if (token == "-") return Op::kDelete;
  if (token == "U-") return Op::kUpdateDelete;
  if (token == "U+") return Op::kUpdateInsert;
  return absl::InvalidArgumentError(absl::StrCat("unknown op '", token, "'"));
}

// "HH:MM:SS[.ffffff]" -> microseconds since midnight.
bool ParseTimeOfDay(absl::string_view text, int64_t* micros) {
  int hours = 0, minutes = 0, seconds = 0;
  std::string whole(text);
  int consumed = 0;
  if (std::sscanf(whole.c_str(), "%2d:%2d:%2d%n", &hours, &minutes, &seconds,
                  &consumed) != 3) {
    return false;
  }
  int64_t fraction_micros = 0;
  if (static_cast<size_t>(consumed) < whole.size()) {
    if (whole[consumed] != '.') return false;
    absl::string_view digits = absl::string_view(whole).substr(consumed + 1);
    if (digits.empty() || digits.size() > 6 ||
        !absl::SimpleAtoi(digits, &fraction_micros) || digits[0] == '+' ||
        digits[0] == '-') {
      return false;
    }
    for (size_t i = digits.size(); i < 6; ++i) fraction_micros *= 10;
  }
  if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59 || seconds < 0 ||
      seconds > 59) {
    return false;
  }
  *micros = ((hours * 60 + minutes) * 60 + seconds) * int64_t{1'000'000} +
            fraction_micros;
  return true;
}

std::string TimeOfDayToPretty(int64_t micros) {
  const int64_t seconds = micros / 1'000'000;
  const int64_t fraction = micros % 1'000'000;
  std::string out = absl::StrFormat("%02d:%02d:%02d", seconds / 3600,
                                    (seconds / 60) % 60, seconds % 60);
  if (fraction != 0) absl::StrAppend(&out, absl::StrFormat(".%06d", fraction));
  return out;
}

bool ParseDate(absl::string_view text, int32_t* days) {
  absl::CivilDay day;
  if (!absl::ParseCivilTime(text, &day)) return false;
  *days = static_cast<int32_t>(day - absl::CivilDay(1970, 1, 1));
  return true;
}

std::string DateToPretty(int32_t days) {
  return absl::FormatCivilTime(absl::CivilDay(1970, 1, 1) + days);
}

template <typename Float>
std::string FloatToPretty(Float value) {
  // The shortest text that parses back to the same value.
  for (int precision = 6; precision <= 17; ++precision) {
    std::string text = absl::StrFormat("%.*g", precision, value);
    double parsed = 0;
    if (absl::SimpleAtod(text, &parsed) &&
        static_cast<Float>(parsed) == value) {
      return text;
    }
  }
  return absl::StrFormat("%.17g", value);
}

absl::Status LineError(int line_number, const absl::Status& status) {
  return absl::InvalidArgumentError(
      absl::StrCat("chunk literal line ", line_number, ": ", status.message()));
}

// Rows of a literal: per row an optional op, the datums and the visibility.
struct ParsedLiteral {
  std::vector<DataType> types;
  std::vector<Op> ops;
  std::vector<Row> rows;
  std::vector<bool> visibility;
};

absl::StatusOr<ParsedLiteral> ParseLiteral(absl::string_view text,
                                           bool with_ops) {
  ParsedLiteral out;
  bool have_header = false;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    std::vector<absl::string_view> tokens = Tokens(line);
    if (tokens.empty() || absl::StartsWith(tokens[0], "#")) continue;
    if (!have_header) {
      for (absl::string_view token : tokens) {
        absl::StatusOr<DataType> type = ParseType(token);
        if (!type.ok()) return LineError(line_number, type.status());
        out.types.push_back(*type);
      }
      have_header = true;
      continue;
    }
    size_t next = 0;
    if (with_ops) {
      absl::StatusOr<Op> op = ParseOp(tokens[next++]);
      if (!op.ok()) return LineError(line_number, op.status());
      out.ops.push_back(*op);
    }
    const size_t num_values = tokens.size() - next;
    bool visible = true;
    if (num_values == out.types.size() + 1 && tokens.back() == "D") {
      visible = false;
    } else if (num_values != out.types.size()) {
      return LineError(line_number, absl::InvalidArgumentError(absl::StrCat(
                                        "expected ", out.types.size(),
                                        " values, got ", num_values)));
    }
    Row row;
    for (size_t column = 0; column < out.types.size(); ++column) {
      absl::StatusOr<Datum> datum =
          ParsePrettyDatum(tokens[next + column], out.types[column]);
      if (!datum.ok()) {
        return LineError(line_number, absl::InvalidArgumentError(absl::StrCat(
                                          "column ", column, ": ",
                                          datum.status().message())));
      }
      row.push_back(*std::move(datum));
    }
    out.rows.push_back(std::move(row));
    out.visibility.push_back(visible);
  }
  if (!have_header) {
    return absl::InvalidArgumentError("chunk literal has no type line");
  }
  return out;
}

DataChunk ToDataChunk(ParsedLiteral& literal) {
  DataChunk chunk = DataChunk::FromRows(literal.types, literal.rows);
  chunk.SetVisibility(std::move(literal.visibility));
  return chunk;
}

std::string RowsToPretty(const DataChunk& chunk, const std::vector<Op>* ops) {
  std::string out;
  for (int column = 0; column < chunk.num_columns(); ++column) {
    absl::StrAppend(&out, column == 0 ? "" : " ",
                    TypeToPretty(chunk.column(column).type()));
  }
  out.append("\n");
  for (size_t row = 0; row < chunk.capacity(); ++row) {
    std::vector<std::string> tokens;
    if (ops != nullptr) tokens.emplace_back(OpName((*ops)[row]));
    for (int column = 0; column < chunk.num_columns(); ++column) {
      tokens.push_back(DatumToPretty(chunk.column(column).value(row),
                                     chunk.column(column).type()));
    }
    if (!chunk.is_visible(row)) tokens.emplace_back("D");
    absl::StrAppend(&out, absl::StrJoin(tokens, " "), "\n");
  }
  return out;
}

}  // namespace

absl::string_view TypeToPretty(DataType type) {
  for (const TypeLetter& entry : kTypeLetters) {
    if (entry.type == type) return entry.letter;
  }
  return "?";
}

absl::StatusOr<Datum> ParsePrettyDatum(absl::string_view token, DataType type) {
  if (token == ".") return Datum();
  auto bad = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("'", token, "' is not a ", DataTypeName(type), " value"));
  };
  switch (type) {
    case DataType::kBoolean:
      if (token == "t" || token == "true") return Datum(true);
      if (token == "f" || token == "false") return Datum(false);
      return bad();
    case DataType::kInt16: {
      int32_t value = 0;
      if (!absl::SimpleAtoi(token, &value) || value < INT16_MIN ||
          value > INT16_MAX) {
        return bad();
      }
      return Datum(static_cast<int16_t>(value));
    }
    case DataType::kInt32: {
      int32_t value = 0;
      if (!absl::SimpleAtoi(token, &value)) return bad();
      return Datum(value);
    }
    case DataType::kInt64: {
      int64_t value = 0;
      if (!absl::SimpleAtoi(token, &value)) return bad();
      return Datum(value);
    }
    case DataType::kFloat32: {
      float value = 0;
      if (!absl::SimpleAtof(token, &value)) return bad();
      return Datum(value);
    }
    case DataType::kFloat64: {
      double value = 0;
      if (!absl::SimpleAtod(token, &value)) return bad();
      return Datum(value);
    }
    case DataType::kDecimal: {
      absl::StatusOr<Decimal> value = Decimal::FromString(token);
      if (!value.ok()) return bad();
      return Datum(*value);
    }
    case DataType::kVarchar:
      return Datum(std::string(token));
    case DataType::kBytea: {
      if (token.size() % 2 != 0) return bad();
      for (char c : token) {
        if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return bad();
      }
      return Datum(absl::HexStringToBytes(token));
    }
    case DataType::kDate: {
      int32_t days = 0;
      if (!ParseDate(token, &days)) return bad();
      return Datum(Date{days});
    }
    case DataType::kTime: {
      int64_t micros = 0;
      if (!ParseTimeOfDay(token, &micros)) return bad();
      return Datum(TimeOfDay{micros});
    }
    case DataType::kTimestamp: {
      const size_t t = token.find('T');
      if (t == absl::string_view::npos) return bad();
      int32_t days = 0;
      int64_t micros = 0;
      if (!ParseDate(token.substr(0, t), &days) ||
          !ParseTimeOfDay(token.substr(t + 1), &micros)) {
        return bad();
      }
      return Datum(Timestamp{days * int64_t{86'400'000'000} + micros});
    }
    default: break;  // not in catalogs yet (serde/data_type.h)
  }
  return bad();
}

std::string DatumToPretty(const Datum& datum, DataType type) {
  if (IsNull(datum)) return ".";
  switch (type) {
    case DataType::kBoolean:
      return std::get<bool>(datum) ? "t" : "f";
    case DataType::kInt16:
      return absl::StrCat(std::get<int16_t>(datum));
    case DataType::kInt32:
      return absl::StrCat(std::get<int32_t>(datum));
    case DataType::kInt64:
      return absl::StrCat(std::get<int64_t>(datum));
    case DataType::kFloat32:
      return FloatToPretty(std::get<float>(datum));
    case DataType::kFloat64:
      return FloatToPretty(std::get<double>(datum));
    case DataType::kDecimal:
      return std::get<Decimal>(datum).ToString();
    case DataType::kVarchar:
      return std::get<std::string>(datum);
    case DataType::kBytea:
      return absl::BytesToHexString(std::get<std::string>(datum));
    case DataType::kDate:
      return DateToPretty(std::get<Date>(datum).days);
    case DataType::kTime:
      return TimeOfDayToPretty(std::get<TimeOfDay>(datum).micros);
    case DataType::kTimestamp: {
      const int64_t micros = std::get<Timestamp>(datum).micros;
      constexpr int64_t kMicrosPerDay = 86'400'000'000;
      int64_t days = micros / kMicrosPerDay;
      int64_t rest = micros % kMicrosPerDay;
      if (rest < 0) {
        rest += kMicrosPerDay;
        --days;
      }
      return absl::StrCat(DateToPretty(static_cast<int32_t>(days)), "T",
                          TimeOfDayToPretty(rest));
    }
    default: break;  // not in catalogs yet (serde/data_type.h)
  }
  return DatumDebugString(datum);
}

absl::StatusOr<StreamChunk> ParseStreamChunk(absl::string_view text) {
  absl::StatusOr<ParsedLiteral> literal = ParseLiteral(text, /*with_ops=*/true);
  if (!literal.ok()) return literal.status();
  std::vector<Op> ops = std::move(literal->ops);
  return StreamChunk(std::move(ops), ToDataChunk(*literal));
}

absl::StatusOr<DataChunk> ParseDataChunk(absl::string_view text) {
  absl::StatusOr<ParsedLiteral> literal =
      ParseLiteral(text, /*with_ops=*/false);
  if (!literal.ok()) return literal.status();
  return ToDataChunk(*literal);
}

StreamChunk StreamChunkFromPretty(absl::string_view text) {
  absl::StatusOr<StreamChunk> chunk = ParseStreamChunk(text);
  if (!chunk.ok()) {
    std::fprintf(stderr, "malformed stream chunk literal: %s\n%s\n",
                 chunk.status().ToString().c_str(), std::string(text).c_str());
    std::abort();
  }
  return *std::move(chunk);
}

DataChunk DataChunkFromPretty(absl::string_view text) {
  absl::StatusOr<DataChunk> chunk = ParseDataChunk(text);
  if (!chunk.ok()) {
    std::fprintf(stderr, "malformed data chunk literal: %s\n%s\n",
                 chunk.status().ToString().c_str(), std::string(text).c_str());
    std::abort();
  }
  return *std::move(chunk);
}

std::string StreamChunkToPretty(const StreamChunk& chunk) {
  return RowsToPretty(chunk.data(), &chunk.ops());
}

std::string DataChunkToPretty(const DataChunk& chunk) {
  return RowsToPretty(chunk, nullptr);
}

Barrier TestBarrier(uint64_t curr, BarrierKind kind,
                    std::shared_ptr<const Mutation> mutation) {
  Barrier barrier;
  barrier.epoch = EpochPair{Epoch(curr), Epoch(curr - 1)};
  barrier.kind = kind;
  barrier.mutation = std::move(mutation);
  return barrier;
}

}  // namespace testing
}  // namespace backfill
