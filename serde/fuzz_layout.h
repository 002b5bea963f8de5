// The layout prefix of serde fuzz inputs: the first bytes of an input choose
// the column types, orders and ids the rest of the input is decoded with, so
// one fuzzer covers every type mix. testonly.
//
//   input = [n] then n x ([type_order] [column_id]) then the encoded bytes
//   column c, type_order < 48: type = kAllDataTypes[type_order % 12],
//                              order = kAllOrderTypes[type_order / 12]
//             type_order >= 48, t = type_order - 48:
//                              type = kAllScalarDataTypes[t % 16],
//                              order = kAllOrderTypes[(t / 16) % 4]
// (The first form is the original one, so the older corpus files keep their
// meaning; FormatFuzzLayout writes it for the twelve original types.)
//
//   std::optional<FuzzLayout> layout = ParseFuzzLayout(input, &rest);
//   std::string seed = FormatFuzzLayout(types, orders, ids) + encoded;
#ifndef SERDE_FUZZ_LAYOUT_H_
#define SERDE_FUZZ_LAYOUT_H_

#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "serde/column_type.h"
#include "serde/data_type.h"
#include "serde/order_type.h"
#include "serde/random_datum.h"
#include "serde/schema.h"

namespace backfill {

struct FuzzLayout {
  std::vector<DataType> types;
  std::vector<OrderType> orders;
  Schema schema;  // names "c<i>", ids from the input (may repeat: invalid)
};

inline constexpr int kFuzzMaxColumns = 8;
inline constexpr int kFuzzOriginalForms = 48;  // 12 types x 4 orders
inline constexpr int kFuzzScalarTypes =
    static_cast<int>(std::size(kAllScalarDataTypes));

// Parses and strips the layout prefix; nullopt if the input is too short.
inline std::optional<FuzzLayout> ParseFuzzLayout(absl::string_view input,
                                                 absl::string_view* rest) {
  if (input.empty()) return std::nullopt;
  const int n = static_cast<uint8_t>(input[0]) % (kFuzzMaxColumns + 1);
  if (input.size() < 1 + 2 * static_cast<size_t>(n)) return std::nullopt;
  FuzzLayout layout;
  for (int c = 0; c < n; ++c) {
    const uint8_t type_order = static_cast<uint8_t>(input[1 + 2 * c]);
    const uint8_t id = static_cast<uint8_t>(input[2 + 2 * c]);
    DataType type;
    if (type_order < kFuzzOriginalForms) {
      type = kAllDataTypes[type_order % 12];
      layout.orders.push_back(kAllOrderTypes[type_order / 12]);
    } else {
      const int t = type_order - kFuzzOriginalForms;
      type = kAllScalarDataTypes[t % kFuzzScalarTypes];
      layout.orders.push_back(kAllOrderTypes[(t / kFuzzScalarTypes) % 4]);
    }
    layout.types.push_back(type);
    layout.schema.push_back({absl::StrCat("c", c), type, id});
  }
  *rest = input.substr(1 + 2 * n);
  return layout;
}

// The prefix ParseFuzzLayout reads back as (types, orders, ids).
inline std::string FormatFuzzLayout(const std::vector<DataType>& types,
                                    const std::vector<OrderType>& orders,
                                    const std::vector<int>& ids) {
  std::string out(1, static_cast<char>(types.size()));
  for (size_t c = 0; c < types.size(); ++c) {
    int type_index = 0, order_index = 0;
    for (int i = 0; i < kFuzzScalarTypes; ++i) {
      if (kAllScalarDataTypes[i] == types[c]) type_index = i;
    }
    for (int i = 0; i < 4; ++i) {
      if (kAllOrderTypes[i] == orders[c]) order_index = i;
    }
    out.push_back(static_cast<char>(
        type_index < 12 ? order_index * 12 + type_index
                        : kFuzzOriginalForms + order_index * kFuzzScalarTypes +
                              type_index));
    out.push_back(static_cast<char>(ids[c]));
  }
  return out;
}

// A ColumnType from the front of *input, for the nested-key fuzzer: one
// byte b per type; b % 3 == 0: LIST of the type that follows; b % 3 == 1:
// STRUCT of (b / 3) % 4 fields (named f<i>, ids i), their types following;
// b % 3 == 2: the scalar kAllScalarDataTypes[(b / 3) % 16]. Past `max_depth`
// every byte is read as a scalar. nullopt if the input ends first.
inline std::optional<ColumnType> ParseFuzzColumnType(absl::string_view* input,
                                                     int max_depth) {
  if (input->empty()) return std::nullopt;
  const uint8_t b = static_cast<uint8_t>((*input)[0]);
  input->remove_prefix(1);
  const int kind = max_depth > 0 ? b % 3 : 2;
  if (kind == 0) {
    std::optional<ColumnType> element =
        ParseFuzzColumnType(input, max_depth - 1);
    if (!element.has_value()) return std::nullopt;
    return ColumnType::List(*std::move(element));
  }
  if (kind == 1) {
    std::vector<StructField> fields;
    for (int i = 0; i < (b / 3) % 4; ++i) {
      std::optional<ColumnType> type =
          ParseFuzzColumnType(input, max_depth - 1);
      if (!type.has_value()) return std::nullopt;
      fields.push_back({absl::StrCat("f", i), *std::move(type), i});
    }
    return ColumnType::Struct(std::move(fields));
  }
  return ColumnType(kAllScalarDataTypes[(b / 3) % kFuzzScalarTypes]);
}

// The bytes ParseFuzzColumnType reads back as `type` (whose STRUCTs have at
// most 3 fields).
inline std::string FormatFuzzColumnType(const ColumnType& type) {
  switch (type.id()) {
    case DataType::kList:
      return std::string(1, '\0') + FormatFuzzColumnType(type.element());
    case DataType::kStruct: {
      std::string out(1, static_cast<char>(1 + 3 * type.fields().size()));
      for (const StructField& field : type.fields()) {
        out += FormatFuzzColumnType(field.type);
      }
      return out;
    }
    default: {
      int index = 0;
      for (int i = 0; i < kFuzzScalarTypes; ++i) {
        if (kAllScalarDataTypes[i] == type.id()) index = i;
      }
      return std::string(1, static_cast<char>(2 + 3 * index));
    }
  }
}

// Every type, the non-key ones included, for the value and text fuzzers:
// one byte b per type, kind b % 5: 0 LIST of the type that follows; 1
// STRUCT of (b / 5) % 4 fields (named f<i>, ids i), their types following;
// 2 the scalar kAllScalarDataTypes[(b / 5) % 16]; 3 MAP whose key type is
// INT16, INT32, INT64 or VARCHAR by (b / 5) % 4 and whose value type
// follows; 4 JSONB. Past `max_depth` kinds 0, 1 and 3 read as scalars.
// nullopt if the input ends first.
inline std::optional<ColumnType> ParseFuzzValueColumnType(
    absl::string_view* input, int max_depth) {
  if (input->empty()) return std::nullopt;
  const uint8_t b = static_cast<uint8_t>((*input)[0]);
  input->remove_prefix(1);
  int kind = b % 5;
  if (max_depth <= 0 && kind != 4) kind = 2;
  switch (kind) {
    case 0: {
      std::optional<ColumnType> element =
          ParseFuzzValueColumnType(input, max_depth - 1);
      if (!element.has_value()) return std::nullopt;
      return ColumnType::List(*std::move(element));
    }
    case 1: {
      std::vector<StructField> fields;
      for (int i = 0; i < (b / 5) % 4; ++i) {
        std::optional<ColumnType> type =
            ParseFuzzValueColumnType(input, max_depth - 1);
        if (!type.has_value()) return std::nullopt;
        fields.push_back({absl::StrCat("f", i), *std::move(type), i});
      }
      return ColumnType::Struct(std::move(fields));
    }
    case 3: {
      static constexpr DataType kKeys[] = {DataType::kInt16, DataType::kInt32,
                                           DataType::kInt64,
                                           DataType::kVarchar};
      std::optional<ColumnType> value =
          ParseFuzzValueColumnType(input, max_depth - 1);
      if (!value.has_value()) return std::nullopt;
      return ColumnType::Map(kKeys[(b / 5) % 4], *std::move(value));
    }
    case 4:
      return ColumnType(DataType::kJsonb);
    default:
      return ColumnType(kAllScalarDataTypes[(b / 5) % kFuzzScalarTypes]);
  }
}

// The bytes ParseFuzzValueColumnType reads back as `type` (STRUCTs of at
// most 3 fields, valid MAP key types).
inline std::string FormatFuzzValueColumnType(const ColumnType& type) {
  auto byte = [](int kind, int index) {
    return std::string(1, static_cast<char>(kind + 5 * index));
  };
  switch (type.id()) {
    case DataType::kList:
      return byte(0, 0) + FormatFuzzValueColumnType(type.element());
    case DataType::kStruct: {
      std::string out = byte(1, static_cast<int>(type.fields().size()));
      for (const StructField& field : type.fields()) {
        out += FormatFuzzValueColumnType(field.type);
      }
      return out;
    }
    case DataType::kMap: {
      int key = 3;
      if (type.map_key() == DataType::kInt16) key = 0;
      if (type.map_key() == DataType::kInt32) key = 1;
      if (type.map_key() == DataType::kInt64) key = 2;
      return byte(3, key) + FormatFuzzValueColumnType(type.map_value());
    }
    case DataType::kJsonb:
      return byte(4, 0);
    default: {
      int index = 0;
      for (int i = 0; i < kFuzzScalarTypes; ++i) {
        if (kAllScalarDataTypes[i] == type.id()) index = i;
      }
      return byte(2, index);
    }
  }
}

}  // namespace backfill

#endif  // SERDE_FUZZ_LAYOUT_H_
