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

#include <cassert>
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

// A ColumnType from the front of *input: one byte b per type, of kind
// b % m and index b / m, where m is 3 for key types (the nested-key and
// nested-value fuzzers) and 5 with `value_types` (every type, the non-key
// ones included, for the value and text fuzzers). Kind 0: LIST of the type
// that follows; 1: STRUCT of index % 4 fields (named f<i>, ids i), their
// types following; 2: the scalar kAllScalarDataTypes[index % 16]; with
// value_types also 3: MAP whose key type is INT16, INT32, INT64 or VARCHAR
// by index % 4 and whose value type follows, and 4: JSONB. Past `max_depth`
// kinds 0, 1 and 3 read as scalars. nullopt if the input ends first.
inline std::optional<ColumnType> ParseFuzzColumnType(absl::string_view* input,
                                                     int max_depth,
                                                     bool value_types) {
  if (input->empty()) return std::nullopt;
  const uint8_t b = static_cast<uint8_t>((*input)[0]);
  input->remove_prefix(1);
  const int modulus = value_types ? 5 : 3;
  int kind = b % modulus;
  const int index = b / modulus;
  if (max_depth <= 0 && kind != 4) kind = 2;
  switch (kind) {
    case 0: {
      std::optional<ColumnType> element =
          ParseFuzzColumnType(input, max_depth - 1, value_types);
      if (!element.has_value()) return std::nullopt;
      return ColumnType::List(*std::move(element));
    }
    case 1: {
      std::vector<StructField> fields;
      for (int i = 0; i < index % 4; ++i) {
        std::optional<ColumnType> type =
            ParseFuzzColumnType(input, max_depth - 1, value_types);
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
          ParseFuzzColumnType(input, max_depth - 1, value_types);
      if (!value.has_value()) return std::nullopt;
      return ColumnType::Map(kKeys[index % 4], *std::move(value));
    }
    case 4:
      return ColumnType(DataType::kJsonb);
    default:
      return ColumnType(kAllScalarDataTypes[index % kFuzzScalarTypes]);
  }
}

// The bytes ParseFuzzColumnType(.., value_types) reads back as `type`
// (STRUCTs of at most 3 fields; MAPs, with valid key types, only with
// value_types).
inline std::string FormatFuzzColumnType(const ColumnType& type,
                                        bool value_types) {
  const int modulus = value_types ? 5 : 3;
  auto byte = [modulus](int kind, int index) {
    return std::string(1, static_cast<char>(kind + modulus * index));
  };
  switch (type.id()) {
    case DataType::kList:
      return byte(0, 0) + FormatFuzzColumnType(type.element(), value_types);
    case DataType::kStruct: {
      std::string out = byte(1, static_cast<int>(type.fields().size()));
      for (const StructField& field : type.fields()) {
        out += FormatFuzzColumnType(field.type, value_types);
      }
      return out;
    }
    case DataType::kMap: {
      assert(value_types);
      int key = 3;
      if (type.map_key() == DataType::kInt16) key = 0;
      if (type.map_key() == DataType::kInt32) key = 1;
      if (type.map_key() == DataType::kInt64) key = 2;
      return byte(3, key) + FormatFuzzColumnType(type.map_value(), value_types);
    }
    default: {
      if (value_types && type.id() == DataType::kJsonb) return byte(4, 0);
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
