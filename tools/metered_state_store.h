// MeteredStateStore: a StateStore that forwards every call to another one
// and measures what the job's metrics need from storage: the time of each
// Checkpoint (a histogram) and the row writes into some tables (the view,
// the upstream table).
//
//   MeteredStateStoreOptions options;
//   options.counted_tables = {{view_table_id,
//                              job_metrics.view_written_rows_total}};
//   options.checkpoint_duration = job_metrics.checkpoint_duration_seconds;
//   MeteredStateStore metered(rocksdb_store.get(), options, Clock::Real());
//   RunStreamingJob(metered, ...);
//
// Only what passes through it is measured: writes to a counted table
// through local (not replicated) instances it created (Insert and Delete each
// count one row write, committed or not), and Checkpoint calls, failed ones
// included.
// Thread-safety: as the target (StateStore is thread-safe); set_target must
// not race with other calls (the runtime calls reopen_store between graphs,
// when nothing made by the old store is alive).
#ifndef TOOLS_METERED_STATE_STORE_H_
#define TOOLS_METERED_STATE_STORE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "metrics/registry.h"
#include "storage/forwarding_state_store.h"
#include "storage/state_store.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

// A table whose row writes are counted, and where.
struct CountedTable {
  TableId table_id = 0;
  // Incremented by one per Insert or Delete into the table.
  Counter written_rows;
};

struct MeteredStateStoreOptions {
  // The tables whose row writes are counted (e.g. the view), each table at
  // most once. Default: none.
  std::vector<CountedTable> counted_tables;
  // Observes every Checkpoint call's duration, in seconds, on the clock
  // given to the constructor. Default: detached.
  Histogram checkpoint_duration;
};

class MeteredStateStore : public ForwardingStateStore {
 public:
  // `target` and `clock` must outlive this store (or target until
  // set_target replaces it).
  MeteredStateStore(StateStore* target, MeteredStateStoreOptions options,
                    Clock& clock);

  // Forwards to `target` from now on (after the caller reopened its store).
  void set_target(StateStore* target) { set_inner(target); }
  StateStore* target() const { return &inner(); }

  // Counts the counted tables' row writes.
  absl::StatusOr<std::unique_ptr<LocalStateStore>> NewLocalStateStore(
      TableId table_id, const LocalOptions& options) override;
  // Observes its duration.
  absl::Status Checkpoint(Epoch epoch) override;

 private:
  const MeteredStateStoreOptions options_;
  Clock& clock_;
};

}  // namespace backfill

#endif  // TOOLS_METERED_STATE_STORE_H_
