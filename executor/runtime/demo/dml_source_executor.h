// DmlSourceExecutor: the upstream of a streaming job: generates the
// workload's changes at a steady rate, deterministically from (seed, offset),
// applies them to the upstream table (it is that table's materialize), and
// emits them (S1 chunks). Barriers come from the barrier coordinator through
// a channel and always have priority; at each barrier both tables are
// committed, with the source offset persisted beside the table so that after
// a crash the source resumes exactly where the last checkpoint left it.
//
//   DmlSourceExecutor source(std::move(barrier_rx), std::move(table),
//                            std::move(offset_table), workload, stop, info);
//
// Thread-safety: an Executor (one poller). `stop_generating` may be set from
// any thread: the source then only forwards barriers.
#ifndef EXECUTOR_RUNTIME_DEMO_DML_SOURCE_EXECUTOR_H_
#define EXECUTOR_RUNTIME_DEMO_DML_SOURCE_EXECUTOR_H_

#include <atomic>
#include <memory>

#include "absl/time/time.h"
#include "executor/channel.h"
#include "executor/executor.h"
#include "executor/runtime/demo/workload.h"
#include "storage/state_table.h"

namespace backfill {

class DmlSourceExecutor final : public Executor {
 public:
  DmlSourceExecutor(ChannelReceiver barriers, std::unique_ptr<StateTable> table,
                    std::unique_ptr<StateTable> offset_table,
                    WorkloadOptions options,
                    std::shared_ptr<std::atomic<bool>> stop_generating,
                    ExecutorInfo info);

  // The catalog of the offset table of source table `table_id`: one row
  // (key 0) holding the next offset. Singleton, one vnode.
  static TableCatalog OffsetTableCatalog(TableId offset_table_id);

  PollResult PollNext(PollContext& cx) override;
  const ExecutorInfo& info() const override { return info_; }

  // Operations generated so far, including those before a restart.
  // Thread-safe (the coordinator reads it while the actor runs).
  uint64_t offset() const { return offset_.load(std::memory_order_relaxed); }
  // The offset this source started from: its persisted offset (0 for a new
  // job), once it has handled its first barrier; 0 before. Thread-safe.
  uint64_t start_offset() const {
    return start_offset_.load(std::memory_order_relaxed);
  }
  bool resumed() const { return resumed_.load(std::memory_order_relaxed); }

 private:
  absl::Status OnBarrier(const Barrier& barrier, absl::Time now);
  absl::StatusOr<StreamChunk> Generate(uint64_t count);
  PollResult Fail(const absl::Status& status);

  ChannelReceiver barriers_;
  std::unique_ptr<StateTable> table_;
  std::unique_ptr<StateTable> offset_table_;
  const WorkloadOptions options_;
  std::shared_ptr<std::atomic<bool>> stop_generating_;
  const ExecutorInfo info_;
  std::vector<DataType> types_;
  bool initialised_ = false;
  std::atomic<bool> resumed_{false};
  std::atomic<uint64_t> offset_{0};
  std::optional<uint64_t> persisted_offset_;
  absl::Time start_time_;
  // When the last chunk went out (batch_interval counts from it).
  absl::Time last_emit_;
  std::atomic<uint64_t> start_offset_{0};
  absl::Status error_;
};

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_DEMO_DML_SOURCE_EXECUTOR_H_
