// Workload: the deterministic rows and operations of the runtime's upstream
// DML source. Everything is a pure function of (seed, key, version) or
// (seed, offset), so a source that restarts from a checkpointed offset over
// the checkpointed table produces exactly the same changes again.
//
//   Row row = WorkloadRow(catalog, /*key=*/42, /*version=*/0, 0.0);
//   WorkloadOp op = NextWorkloadOp(options, /*offset=*/1000);
#ifndef EXECUTOR_RUNTIME_DEMO_WORKLOAD_H_
#define EXECUTOR_RUNTIME_DEMO_WORKLOAD_H_

#include <cstdint>

#include "absl/time/time.h"
#include "serde/row.h"
#include "storage/table_catalog.h"

namespace backfill {

struct WorkloadOptions {
  // Seed of every random choice. Default 0.
  uint64_t seed = 0;
  // Upstream changes per second; 0 = no changes. Default 0.
  double ops_per_second = 0;
  // Relative weights of the operation kinds (>= 0, not all 0 if
  // ops_per_second > 0). Default 1 each.
  double insert_weight = 1;
  double update_weight = 1;
  double delete_weight = 1;
  // Updates may move a row to another key (and vnode). Default false.
  bool update_primary_key = false;
  // Stop after this many operations; 0 = never. Default 0.
  uint64_t max_ops = 0;
  // Share of NULLs in nullable columns, pk included, in [0, 1]. Default 0.
  double null_fraction = 0;
  // Keys are drawn from [0, key_space). >= 1. Default 1000.
  uint64_t key_space = 1000;
  // Rows per generated chunk, at most. Default 256.
  uint32_t max_chunk_rows = 256;
  // The source emits the changes that fell due at most this often, as a
  // connector polls (a full chunk of max_chunk_rows goes at once): at a
  // steady rate each chunk then holds about rate x interval changes rather
  // than one. Zero (or negative): each change as soon as it is due.
  // Default zero.
  absl::Duration batch_interval = absl::ZeroDuration();
};

enum class WorkloadOpKind { kInsert, kUpdate, kDelete };

// The op at `offset`: a kind and a key; `target_key` is where a pk-changing
// update moves the row (== key for an in-place update); `version` seeds the
// new values.
struct WorkloadOp {
  WorkloadOpKind kind = WorkloadOpKind::kInsert;
  uint64_t key = 0;
  uint64_t target_key = 0;
  uint64_t version = 0;
};

WorkloadOp NextWorkloadOp(const WorkloadOptions& options, uint64_t offset);

// The number of ops due `elapsed_seconds` after the start at
// `ops_per_second`: floor(elapsed_seconds * ops_per_second), 0 for negative
// or NaN products, saturating at UINT64_MAX (scenarios may ask for any
// finite rate).
uint64_t WorkloadOpsDue(double ops_per_second, double elapsed_seconds);

// The row of `key` with values of `version`: pk columns are a function of the
// key only (NULL for a fraction `null_fraction` of keys in nullable pk
// columns; for TIMESTAMPTZ, INTERVAL, SERIAL, INT256 and LIST distinct keys
// give distinct values, a STRUCT as its first field does, some other types
// wrap; a LIST pk value spells the key in digits, one element each, so key 0
// is the empty list, lists prefix others, and elements are NULL, NaN or
// -0.0 for some digits), other columns of
// (key, version). Every type of the catalog has values, the nested ones
// included: LISTs of 0 to 4 elements, one in eight elements (and STRUCT
// fields, MAP values) NULL, floats inside LISTs sometimes -0.0, 0.0, NaN
// or an infinity; MAPs of up to 3 entries; JSONB objects, arrays, strings,
// numbers and nulls; INTERVALs held in varied forms (the same span as
// months, days or microseconds).
Row WorkloadRow(const TableCatalog& catalog, uint64_t seed, uint64_t key,
                uint64_t version, double null_fraction);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_DEMO_WORKLOAD_H_
