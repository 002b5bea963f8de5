// (testonly) The rows the storage benchmarks write and scan, one definition
// so that their figures describe the same data: row r has an 8-byte
// big-endian pk, lives in vnode VnodeOf(r) of kVnodes, and has a 40-byte
// value (about four columns' worth).
//
//   local.Insert(benchmark_rows::VnodeOf(r), benchmark_rows::Pk(r),
//                benchmark_rows::Value(r));
//   absl::StatusOr<benchmark_rows::ScanTotals> totals =
//       benchmark_rows::ScanCommitted(store, table);
//
// Thread-safety: pure functions; ScanCommitted as the store's iterators.
#ifndef STORAGE_BENCHMARK_ROWS_H_
#define STORAGE_BENCHMARK_ROWS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "serde/vnode.h"
#include "storage/state_store.h"

namespace backfill {
namespace benchmark_rows {

inline constexpr int kVnodes = 256;

// Row `row`'s pk: its number, 8 bytes big-endian (so pks sort by number).
std::string Pk(uint64_t row);
// Its vnode, spread over [0, kVnodes) by a multiplicative hash.
VirtualNode VnodeOf(uint64_t row);
// Its 40-byte value.
std::string Value(uint64_t row);
// The sum of `bytes` as unsigned bytes: what a scan computes from each value
// so that it reads every byte.
uint64_t SumBytes(absl::string_view bytes);

struct ScanTotals {
  uint64_t rows = 0;
  uint64_t value_byte_sum = 0;  // SumBytes over every value
};

// A full committed scan of `table` (every vnode in [0, kVnodes), at
// Epoch::Max()). Errors: the store's, from NewIterator or the iteration.
absl::StatusOr<ScanTotals> ScanCommitted(StateStore& store, TableId table);

}  // namespace benchmark_rows
}  // namespace backfill

#endif  // STORAGE_BENCHMARK_ROWS_H_
