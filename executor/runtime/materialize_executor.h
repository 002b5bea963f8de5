// MaterializeExecutor: writes every change of its input into a StateTable
// and commits the table at every barrier; forwards every message unchanged.
// The table's op consistency decides the checks: consistent (a point read
// per row; an insert of an existing key, or a delete of a missing or
// different row, fails the stream) or none (blind writes, the fast path;
// StreamingJobOptions::view_op_consistency).
//
//   MaterializeExecutor view(std::move(merge), std::move(view_table), info);
//
// The table is initialised at the first barrier, which must satisfy
// committed >= first.prev (true for a job's Initial barrier, which the
// runtime injects at {committed + 1, committed}); otherwise FailedPrecondition.
// Chunk columns are the table's columns, in order.
// Thread-safety: an Executor (one poller).
#ifndef EXECUTOR_RUNTIME_MATERIALIZE_EXECUTOR_H_
#define EXECUTOR_RUNTIME_MATERIALIZE_EXECUTOR_H_

#include <memory>

#include "executor/executor.h"
#include "executor/stream_chunk.h"
#include "storage/state_table.h"

namespace backfill {

class MaterializeExecutor final : public Executor {
 public:
  MaterializeExecutor(BoxedExecutor input, std::unique_ptr<StateTable> table,
                      ExecutorInfo info);

  PollResult PollNext(PollContext& cx) override;
  const ExecutorInfo& info() const override { return info_; }

  // Rows written so far (inserts + deletes, an update counts once).
  uint64_t rows_written() const { return rows_written_; }

 private:
  absl::Status Write(const StreamChunk& chunk);

  BoxedExecutor input_;
  std::unique_ptr<StateTable> table_;
  ExecutorInfo info_;
  bool initialised_ = false;
  uint64_t rows_written_ = 0;
  absl::Status error_;
};

// Applies `chunk` to `table`: Insert, Delete, and each U-/U+ pair as Update.
// Errors: the table's (inconsistent op, unowned vnode, ...) or
// InvalidArgument for a half pair.
absl::Status WriteChunkToTable(const StreamChunk& chunk, StateTable& table);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_MATERIALIZE_EXECUTOR_H_
