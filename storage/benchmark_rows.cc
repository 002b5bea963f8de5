#include "storage/benchmark_rows.h"

#include <memory>

#include "absl/base/internal/endian.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace benchmark_rows {

std::string Pk(uint64_t row) {
  char pk[8];
  absl::big_endian::Store64(pk, row);
  return std::string(pk, 8);
}

VirtualNode VnodeOf(uint64_t row) {
  return static_cast<VirtualNode>((row * 2654435761u) % kVnodes);
}

std::string Value(uint64_t row) {
  std::string value(40, '\0');
  for (int i = 0; i < 40; ++i) value[i] = static_cast<char>(row * 31 + i);
  return value;
}

uint64_t SumBytes(absl::string_view bytes) {
  uint64_t sum = 0;
  for (unsigned char c : bytes) sum += c;
  return sum;
}

absl::StatusOr<ScanTotals> ScanCommitted(StateStore& store, TableId table) {
  ScanTotals totals;
  for (int vnode = 0; vnode < kVnodes; ++vnode) {
    BACKFILL_ASSIGN_OR_RETURN(
        std::unique_ptr<StateStoreIterator> it,
        store.NewIterator(table, static_cast<VirtualNode>(vnode),
                          PkRange::All(), Epoch::Max()));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      totals.value_byte_sum += SumBytes(it->value());
      ++totals.rows;
    }
    BACKFILL_RETURN_IF_ERROR(it->status());
  }
  return totals;
}

}  // namespace benchmark_rows
}  // namespace backfill
