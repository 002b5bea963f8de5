// The deterministic workload of the crash test, shared by the child that runs
// it (crash_child) and the parent that predicts its content
// (crash_test): the writes of epoch e depend only on (seed, e).
#ifndef STORAGE_ROCKSDB_CRASH_WORKLOAD_H_
#define STORAGE_ROCKSDB_CRASH_WORKLOAD_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>

#include "absl/base/internal/endian.h"
#include "absl/strings/str_cat.h"
#include "serde/vnode.h"
#include "storage/table_key.h"

namespace backfill {
namespace crash_workload {

inline constexpr TableId kNumTables = 3;  // Tables 1..3.
inline constexpr int kNumVnodes = 4;
inline constexpr int kWritesPerTable = 40;

// Calls `write(table, vnode, pk, value-or-nullopt)` for every write of
// `epoch`, in order.
inline void ForEachWrite(
    uint64_t seed, uint64_t epoch,
    const std::function<void(TableId, VirtualNode, const std::string&,
                             const std::optional<std::string>&)>& write) {
  std::mt19937_64 rng(seed * 1000003u + epoch);
  for (TableId table = 1; table <= kNumTables; ++table) {
    for (int i = 0; i < kWritesPerTable; ++i) {
      const VirtualNode vnode = static_cast<VirtualNode>(rng() % kNumVnodes);
      char pk[2];
      absl::big_endian::Store16(pk, static_cast<uint16_t>(rng() % 300));
      if (rng() % 5 == 0) {
        write(table, vnode, std::string(pk, 2), std::nullopt);
      } else {
        write(table, vnode, std::string(pk, 2),
              absl::StrCat("e", epoch, "t", table, "i", i,
                           std::string(rng() % 64, 'x')));
      }
    }
  }
}

}  // namespace crash_workload
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_CRASH_WORKLOAD_H_
