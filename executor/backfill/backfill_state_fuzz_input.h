// The input layout of //executor/backfill:backfill_state_fuzz and its corpus
// generator: the first bytes choose an upstream table shape, the rest is one
// stored row of that table's backfill progress table (key bytes, value
// bytes) as a restart reads it from the state store. testonly.
//
//   input = [shape] then num_pk x [type_order] then [vnode] [key_len]
//           then key_len key bytes, then the value bytes (to the end)
//   shape: num_pk = 1 + shape % 3, singleton = (shape / 3) % 2,
//          nullable pk = (shape / 6) % 2, column-aware = (shape / 12) % 2
//   pk column c: type = kAllDataTypes[type_order % 12],
//                order = kAllOrderTypes[(type_order / 12) % 4]
//   vnode: the progress row's vnode, vnode % kProgressFuzzVnodeCount
//
// clang-format off
//   std::optional<ProgressFuzzInput> in = ParseProgressFuzzInput(bytes);
//   std::string seed = FormatProgressFuzzInput(shape, type_orders, vnode,
//                                              key, value);
// clang-format on
#ifndef EXECUTOR_BACKFILL_BACKFILL_STATE_FUZZ_INPUT_H_
#define EXECUTOR_BACKFILL_BACKFILL_STATE_FUZZ_INPUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "serde/data_type.h"
#include "serde/random_datum.h"
#include "serde/vnode.h"
#include "storage/table_catalog.h"

namespace backfill {

inline constexpr int kProgressFuzzVnodeCount = 4;
inline constexpr TableId kProgressFuzzUpstreamTableId = 7;
inline constexpr TableId kProgressFuzzProgressTableId = 1000;

struct ProgressFuzzInput {
  // pk columns "pk<c>" (ids 1..num_pk), then a nullable VARCHAR "v"; the
  // whole pk as distribution key unless singleton; 4 vnodes.
  TableCatalog upstream;
  VirtualNode vnode = 0;
  // The stored progress row: key (the progress table's pk bytes) and value.
  absl::string_view key;
  absl::string_view value;
};

// Parses the layout; nullopt if the input is too short for its header.
inline std::optional<ProgressFuzzInput> ParseProgressFuzzInput(
    absl::string_view input) {
  if (input.empty()) return std::nullopt;
  const uint8_t shape = static_cast<uint8_t>(input[0]);
  const int num_pk = 1 + shape % 3;
  const size_t header = 1 + static_cast<size_t>(num_pk) + 2;
  if (input.size() < header) return std::nullopt;
  ProgressFuzzInput out;
  TableCatalog& t = out.upstream;
  t.table_id = kProgressFuzzUpstreamTableId;
  t.name = "t";
  const bool singleton = (shape / 3) % 2 == 1;
  const bool nullable = (shape / 6) % 2 == 1;
  for (int c = 0; c < num_pk; ++c) {
    const uint8_t type_order = static_cast<uint8_t>(input[1 + c]);
    t.columns.push_back({absl::StrCat("pk", c), kAllDataTypes[type_order % 12],
                         c + 1, nullable});
    t.pk_indices.push_back(c);
    t.pk_orders.push_back(kAllOrderTypes[(type_order / 12) % 4]);
    if (!singleton) t.dist_key_indices.push_back(c);
  }
  t.columns.push_back({"v", DataType::kVarchar, num_pk + 1, true});
  for (int c = 0; c <= num_pk; ++c) t.value_indices.push_back(c);
  t.vnode_count = kProgressFuzzVnodeCount;
  t.value_encoding = (shape / 12) % 2 == 1 ? ValueEncoding::kColumnAware
                                           : ValueEncoding::kPositional;
  out.vnode = static_cast<VirtualNode>(static_cast<uint8_t>(input[1 + num_pk]) %
                                       kProgressFuzzVnodeCount);
  const size_t key_len = static_cast<uint8_t>(input[2 + num_pk]);
  const absl::string_view rest = input.substr(header);
  out.key = rest.substr(0, key_len);
  out.value = rest.substr(out.key.size());
  return out;
}

// The bytes ParseProgressFuzzInput reads back. REQUIRES: type_orders.size()
// == 1 + shape % 3, key.size() <= 255.
inline std::string FormatProgressFuzzInput(
    uint8_t shape, const std::vector<uint8_t>& type_orders, VirtualNode vnode,
    absl::string_view key, absl::string_view value) {
  std::string out(1, static_cast<char>(shape));
  for (uint8_t type_order : type_orders) {
    out.push_back(static_cast<char>(type_order));
  }
  out.push_back(static_cast<char>(vnode));
  out.push_back(static_cast<char>(key.size()));
  absl::StrAppend(&out, key, value);
  return out;
}

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_BACKFILL_STATE_FUZZ_INPUT_H_
