#include "executor/runtime/demo/dml_source_executor.h"

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/stream_chunk.h"
#include "third_party/absl_extras/saturating.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

TableCatalog DmlSourceExecutor::OffsetTableCatalog(TableId offset_table_id) {
  TableCatalog catalog;
  catalog.table_id = offset_table_id;
  catalog.name = "source_offset";
  catalog.columns = {{"id", DataType::kInt16, 0, false},
                     {"offset", DataType::kInt64, 1, false}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Ascending()};
  catalog.vnode_count = 1;
  catalog.value_indices = {0, 1};
  return catalog;
}

DmlSourceExecutor::DmlSourceExecutor(
    ChannelReceiver barriers, std::unique_ptr<StateTable> table,
    std::unique_ptr<StateTable> offset_table, WorkloadOptions options,
    std::shared_ptr<std::atomic<bool>> stop_generating, ExecutorInfo info)
    : barriers_(std::move(barriers)),
      table_(std::move(table)),
      offset_table_(std::move(offset_table)),
      options_(options),
      stop_generating_(std::move(stop_generating)),
      info_(std::move(info)),
      types_(ColumnTypes(table_->catalog().columns)) {}

PollResult DmlSourceExecutor::Fail(const absl::Status& status) {
  error_ = absl::Status(status.code(),
                        absl::StrCat(info_.identity, ": ", status.message()));
  return PollResult::Error(error_);
}

absl::Status DmlSourceExecutor::OnBarrier(const Barrier& barrier,
                                          absl::Time now) {
  if (!initialised_) {
    if (!table_->ReadyToInit(barrier.epoch) ||
        !offset_table_->ReadyToInit(barrier.epoch)) {
      return absl::FailedPreconditionError(
          absl::StrCat("first barrier ", barrier.epoch.DebugString(),
                       " is ahead of the committed epoch"));
    }
    BACKFILL_RETURN_IF_ERROR(table_->InitEpoch(barrier.epoch));
    BACKFILL_RETURN_IF_ERROR(offset_table_->InitEpoch(barrier.epoch));
    BACKFILL_ASSIGN_OR_RETURN(std::optional<Row> row,
                              offset_table_->GetRow(Row{int16_t{0}}));
    if (row.has_value()) {
      const int64_t* offset = std::get_if<int64_t>(&(*row)[1]);
      if (offset == nullptr || *offset < 0) {
        return absl::DataLossError("corrupt source offset row");
      }
      offset_.store(static_cast<uint64_t>(*offset));
      persisted_offset_ = static_cast<uint64_t>(*offset);
      resumed_.store(true);
    }
    start_time_ = now;
    last_emit_ = now;
    start_offset_.store(offset_.load(), std::memory_order_relaxed);
    initialised_ = true;
    return absl::OkStatus();
  }
  const uint64_t offset = offset_.load();
  if (persisted_offset_ != offset) {
    const Row row{int16_t{0}, static_cast<int64_t>(offset)};
    if (persisted_offset_.has_value()) {
      BACKFILL_RETURN_IF_ERROR(offset_table_->Update(
          Row{int16_t{0}, static_cast<int64_t>(*persisted_offset_)}, row));
    } else {
      BACKFILL_RETURN_IF_ERROR(offset_table_->Insert(row));
    }
    persisted_offset_ = offset;
  }
  BACKFILL_RETURN_IF_ERROR(table_->Commit(barrier.epoch));
  return offset_table_->Commit(barrier.epoch);
}

absl::StatusOr<StreamChunk> DmlSourceExecutor::Generate(uint64_t count) {
  const TableCatalog& catalog = table_->catalog();
  std::vector<Op> ops;
  std::vector<Row> rows;
  for (uint64_t i = 0; i < count; ++i, offset_.fetch_add(1)) {
    const WorkloadOp op = NextWorkloadOp(options_, offset_.load());
    Row fresh = WorkloadRow(catalog, options_.seed, op.key, op.version,
                            options_.null_fraction);
    BACKFILL_ASSIGN_OR_RETURN(
        std::optional<Row> existing,
        table_->GetRow(ProjectRow(fresh, catalog.pk_indices)));
    if (!existing.has_value()) {
      BACKFILL_RETURN_IF_ERROR(table_->Insert(fresh));
      ops.push_back(Op::kInsert);
      rows.push_back(std::move(fresh));
      continue;
    }
    if (op.kind == WorkloadOpKind::kDelete) {
      BACKFILL_RETURN_IF_ERROR(table_->Delete(*existing));
      ops.push_back(Op::kDelete);
      rows.push_back(std::move(*existing));
      continue;
    }
    Row updated = std::move(fresh);
    if (op.target_key != op.key) {
      Row moved = WorkloadRow(catalog, options_.seed, op.target_key, op.version,
                              options_.null_fraction);
      BACKFILL_ASSIGN_OR_RETURN(
          std::optional<Row> occupied,
          table_->GetRow(ProjectRow(moved, catalog.pk_indices)));
      if (!occupied.has_value()) updated = std::move(moved);
    }
    BACKFILL_RETURN_IF_ERROR(table_->Update(*existing, updated));
    ops.push_back(Op::kUpdateDelete);
    rows.push_back(std::move(*existing));
    ops.push_back(Op::kUpdateInsert);
    rows.push_back(std::move(updated));
  }
  return StreamChunk::FromRows(types_, std::move(ops), rows);
}

PollResult DmlSourceExecutor::PollNext(PollContext& cx) {
  if (!error_.ok()) return PollResult::Error(error_);
  // Barriers first.
  PollResult barrier = barriers_.PollReceive(cx);
  if (barrier.is_error()) return Fail(barrier.status());
  if (barrier.is_end()) return PollResult::End();
  if (barrier.is_ready()) {
    const auto* b = std::get_if<Barrier>(&barrier.message());
    if (b == nullptr) {
      return Fail(
          absl::InternalError("the barrier channel carried a non-barrier"));
    }
    if (absl::Status status = OnBarrier(*b, cx.clock().Now()); !status.ok()) {
      return Fail(status);
    }
    return barrier;
  }
  if (!initialised_ || options_.ops_per_second <= 0 ||
      (stop_generating_ != nullptr && stop_generating_->load()) ||
      (options_.max_ops > 0 && offset_.load() >= options_.max_ops)) {
    return PollResult::Pending();
  }
  const double elapsed = absl::ToDoubleSeconds(cx.clock().Now() - start_time_);
  // Saturating: a scenario may ask for any finite rate (1e300 ops/s).
  const uint64_t start_offset = this->start_offset();
  const uint64_t target = SaturatingAdd(
      start_offset, WorkloadOpsDue(options_.ops_per_second, elapsed));
  const uint64_t offset = offset_.load();
  if (target <= offset) {
    const double next_seconds = static_cast<double>(offset + 1 - start_offset) /
                                options_.ops_per_second;
    cx.WakeNoLaterThan(start_time_ + absl::Seconds(next_seconds));
    return PollResult::Pending();
  }
  uint64_t count = std::min<uint64_t>(target - offset, options_.max_chunk_rows);
  if (options_.max_ops > 0) count = std::min(count, options_.max_ops - offset);
  const bool last = options_.max_ops > 0 && offset + count == options_.max_ops;
  // Batching: less than a full chunk waits for the interval to pass (the
  // last ops of a bounded workload do not).
  if (options_.batch_interval > absl::ZeroDuration() &&
      count < options_.max_chunk_rows && !last) {
    const absl::Time flush_at = last_emit_ + options_.batch_interval;
    if (cx.clock().Now() < flush_at) {
      cx.WakeNoLaterThan(flush_at);
      return PollResult::Pending();
    }
  }
  absl::StatusOr<StreamChunk> chunk = Generate(count);
  if (!chunk.ok()) return Fail(chunk.status());
  last_emit_ = cx.clock().Now();
  return PollResult::Ready(std::move(*chunk));
}

}  // namespace backfill
