#include "executor/runtime/materialize_executor.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

absl::Status WriteChunkToTable(const StreamChunk& chunk, StateTable& table) {
  std::optional<Row> pending_delete;
  for (size_t i = 0; i < chunk.capacity(); ++i) {
    if (!chunk.is_visible(i)) continue;
    Row row = chunk.RowAt(i);
    switch (chunk.op(i)) {
      case Op::kInsert:
        BACKFILL_RETURN_IF_ERROR(table.Insert(row));
        break;
      case Op::kDelete:
        BACKFILL_RETURN_IF_ERROR(table.Delete(row));
        break;
      case Op::kUpdateDelete:
        pending_delete = std::move(row);
        break;
      case Op::kUpdateInsert:
        if (!pending_delete.has_value()) {
          return absl::InvalidArgumentError(
              absl::StrCat("U+ without U- at row ", i));
        }
        BACKFILL_RETURN_IF_ERROR(table.Update(*pending_delete, row));
        pending_delete.reset();
        break;
    }
  }
  if (pending_delete.has_value()) {
    return absl::InvalidArgumentError("U- without U+ at the end of a chunk");
  }
  return absl::OkStatus();
}

MaterializeExecutor::MaterializeExecutor(BoxedExecutor input,
                                         std::unique_ptr<StateTable> table,
                                         ExecutorInfo info)
    : input_(std::move(input)), table_(std::move(table)), info_(std::move(info)) {}

absl::Status MaterializeExecutor::Write(const StreamChunk& chunk) {
  rows_written_ += chunk.cardinality();
  return WriteChunkToTable(chunk, *table_);
}

PollResult MaterializeExecutor::PollNext(PollContext& cx) {
  if (!error_.ok()) return PollResult::Error(error_);
  PollResult result = input_->PollNext(cx);
  if (!result.is_ready()) return result;
  Message& message = result.message();
  absl::Status status;
  if (const auto* chunk = std::get_if<StreamChunk>(&message)) {
    if (!initialised_) {
      status = absl::FailedPreconditionError("a chunk before the first barrier");
    } else {
      status = Write(*chunk);
    }
  } else if (const auto* barrier = std::get_if<Barrier>(&message)) {
    if (!initialised_) {
      if (!table_->ReadyToInit(barrier->epoch)) {
        status = absl::FailedPreconditionError(absl::StrCat(
            "first barrier ", barrier->epoch.DebugString(),
            " is ahead of the committed epoch"));
      } else {
        status = table_->InitEpoch(barrier->epoch);
        initialised_ = status.ok();
      }
    } else {
      status = table_->Commit(barrier->epoch);
    }
  }
  if (!status.ok()) {
    error_ = absl::Status(status.code(),
                          absl::StrCat(info_.identity, ": ", status.message()));
    return PollResult::Error(error_);
  }
  return result;
}

}  // namespace backfill
