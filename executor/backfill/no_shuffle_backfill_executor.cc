#include "executor/backfill/no_shuffle_backfill_executor.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "executor/backfill/backfill_state.h"
#include "executor/backfill/first_barrier.h"
#include "executor/backfill/marking.h"
#include "executor/backfill/progress_rows.h"
#include "executor/stream_chunk.h"
#include "serde/row.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

struct NoShuffleBackfillExecutor::Cursor {
  VirtualNode vnode = 0;
  std::unique_ptr<RowIterator> iterator;
  // A copy of the iterator's current pk bytes (the heap's key).
  std::string pk_bytes;

  // The merge's heap order: the smallest pk bytes on top.
  static bool After(const std::unique_ptr<Cursor>& a,
                    const std::unique_ptr<Cursor>& b) {
    return a->pk_bytes > b->pk_bytes;
  }
};

namespace {

absl::Status WithContext(const absl::Status& status,
                         absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(context, ": ", status.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<NoShuffleBackfillExecutor>>
NoShuffleBackfillExecutor::Create(StateTable& upstream_table,
                                  BoxedExecutor upstream,
                                  std::unique_ptr<StateTable> progress_table,
                                  ProgressReporter* reporter,
                                  BackfillMetrics* metrics,
                                  const NoShuffleBackfillOptions& options) {
  const std::string name =
      absl::StrCat("NoShuffleBackfill(actor ", options.actor_id, ", fragment ",
                   options.fragment_id, ")");
  if (upstream == nullptr || progress_table == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": upstream and progress_table are required"));
  }
  if (options.chunk_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": chunk_size is 0"));
  }
  const TableCatalog& catalog = upstream_table.catalog();
  const std::vector<DataType> s1_types = ColumnTypes(catalog.columns);
  absl::StatusOr<OutputMapping> mapping = OutputMapping::Create(
      static_cast<int>(s1_types.size()), options.output_indices);
  if (!mapping.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": output_indices: ", mapping.status().message()));
  }
  if (absl::Status status = ValidateProgressTable(
          catalog, upstream_table.vnodes(), *progress_table);
      !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", status.message()));
  }
  ExecutorInfo info;
  info.schema = mapping->MapTypes(s1_types);
  info.stream_key = mapping->MapKey(catalog.pk_indices);
  info.identity = absl::StrCat(name, " on table ", catalog.table_id, " (",
                               catalog.name, ")");
  return std::unique_ptr<NoShuffleBackfillExecutor>(
      new NoShuffleBackfillExecutor(
          upstream_table, std::move(upstream), std::move(progress_table),
          reporter, metrics, options, std::move(*mapping), std::move(info)));
}

NoShuffleBackfillExecutor::NoShuffleBackfillExecutor(
    StateTable& upstream_table, BoxedExecutor upstream,
    std::unique_ptr<StateTable> progress_table, ProgressReporter* reporter,
    BackfillMetrics* metrics, const NoShuffleBackfillOptions& options,
    OutputMapping output_mapping, ExecutorInfo info)
    : upstream_table_(upstream_table),
      upstream_(std::move(upstream)),
      progress_table_(std::move(progress_table)),
      reporter_(reporter),
      metrics_(metrics != nullptr ? *metrics : BackfillMetrics{}),
      options_(options),
      output_mapping_(std::move(output_mapping)),
      info_(std::move(info)),
      pk_types_(upstream_table.catalog().PkTypes()),
      s1_types_(ColumnTypes(upstream_table.catalog().columns)),
      controls_(BackfillControls::Options::Of(options_), metrics_),
      output_(metrics_.barrier_latency_seconds),
      commit_waiter_(progress_table_->store()) {
  metrics_.vnodes_assigned.Set(
      static_cast<double>(progress_table_->vnodes().Count()));
}

NoShuffleBackfillExecutor::~NoShuffleBackfillExecutor() {
  CloseScans();
  commit_waiter_.Stop();
}

std::string NoShuffleBackfillExecutor::Context() const {
  std::string context = info_.identity;
  if (phase_ != Phase::kAwaitFirstBarrier) {
    absl::StrAppend(&context, " at ", progress_table_->epoch().DebugString());
  }
  return context;
}

NoShuffleBackfillExecutor::Step NoShuffleBackfillExecutor::Fail(
    const absl::Status& status) {
  final_status_ = WithContext(status, Context());
  phase_ = Phase::kEnded;
  output_.Clear();
  CloseScans();
  return Step::kProgress;
}

PollResult NoShuffleBackfillExecutor::PollNext(PollContext& cx) {
  while (true) {
    if (!output_.empty()) {
      return PollResult::Ready(output_.Pop(cx.clock().Now()));
    }
    Step step = Step::kProgress;
    switch (phase_) {
      case Phase::kAwaitFirstBarrier:
      case Phase::kInitProgressTable:
        step = PollStartup(cx);
        break;
      case Phase::kBackfill:
        step = PollBackfill(cx);
        break;
      case Phase::kFinishing:
      case Phase::kSteady:
        step = PollForward(cx);
        break;
      case Phase::kEnded:
        return final_status_.ok() ? PollResult::End()
                                  : PollResult::Error(final_status_);
    }
    if (step == Step::kPending) return PollResult::Pending();
  }
}

// ---- Start-up ---------------------------------------------------------------

absl::Status NoShuffleBackfillExecutor::LoadProgress() {
  BACKFILL_ASSIGN_OR_RETURN(BackfillState loaded,
                            ReadProgressRows(*progress_table_, pk_types_));
  state_.emplace(std::move(loaded));
  // Every owned vnode must tell the same story: all NotStarted (a fresh
  // start) or all at one position, all finished or none. Row counts differ
  // (the actor's count is in its first vnode's row).
  const std::vector<VirtualNode> vnodes = state_->owned_vnodes();
  const VnodeProgress& first = *state_->Get(vnodes.front());
  for (VirtualNode vnode : vnodes) {
    const VnodeProgress& progress = *state_->Get(vnode);
    if (!ProgressSamePosition(first, progress)) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the progress of vnodes ", vnodes.front(), " and ", vnode,
          " differs (", ProgressDebugString(first), " vs ",
          ProgressDebugString(progress),
          "): it was written by actors with another vnode split, i.e. at "
          "another parallelism, and a no-shuffle backfill cannot be "
          "rescaled"));
    }
  }
  total_rows_ = state_->total_row_count();
  if (reporter_ != nullptr) reporter_->SetPersistedRows(total_rows_);
  if (std::holds_alternative<Completed>(first)) {
    // Finished before a restart: the next barrier reports it again.
    phase_ = Phase::kFinishing;
  } else if (const auto* in_progress = std::get_if<InProgress>(&first)) {
    position_ = in_progress->current_pos;
  }
  return absl::OkStatus();
}

NoShuffleBackfillExecutor::Step NoShuffleBackfillExecutor::PollStartup(
    PollContext& cx) {
  if (phase_ == Phase::kAwaitFirstBarrier) {
    absl::StatusOr<std::optional<EpochPair>> first =
        PollFirstBarrier(*upstream_, cx, controls_, output_);
    if (!first.ok()) return Fail(first.status());
    if (!first->has_value()) return Step::kPending;
    first_epoch_ = **first;
    phase_ = Phase::kInitProgressTable;
    return Step::kProgress;
  }
  const EpochPair first = first_epoch_;
  if (!commit_waiter_.Ready([&] { return progress_table_->ReadyToInit(first); },
                            cx)) {
    return Step::kPending;
  }
  commit_waiter_.Stop();
  if (absl::Status status = progress_table_->InitEpoch(first); !status.ok()) {
    return Fail(status);
  }
  phase_ = Phase::kBackfill;
  if (absl::Status status = LoadProgress(); !status.ok()) return Fail(status);
  return Step::kProgress;
}

// ---- The snapshot side ------------------------------------------------------

void NoShuffleBackfillExecutor::CloseScans() {
  cursors_.clear();
  scans_open_ = false;
}

absl::StatusOr<std::unique_ptr<NoShuffleBackfillExecutor::Cursor>>
NoShuffleBackfillExecutor::OpenScan(VirtualNode vnode) {
  const PkRowRange range =
      position_.has_value() ? PkRowRange::After(*position_) : PkRowRange::All();
  auto cursor = std::make_unique<Cursor>();
  cursor->vnode = vnode;
  BACKFILL_ASSIGN_OR_RETURN(cursor->iterator,
                            upstream_table_.IterWithVnode(vnode, range));
  cursor->iterator->SeekToFirst();
  BACKFILL_RETURN_IF_ERROR(cursor->iterator->status());
  if (!cursor->iterator->Valid()) return nullptr;
  cursor->pk_bytes = std::string(cursor->iterator->pk_bytes());
  return cursor;
}

absl::Status NoShuffleBackfillExecutor::OpenScans() {
  CloseScans();
  for (VirtualNode vnode : upstream_table_.vnodes().set_vnodes()) {
    BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<Cursor> cursor, OpenScan(vnode));
    if (cursor != nullptr) cursors_.push_back(std::move(cursor));
  }
  std::make_heap(cursors_.begin(), cursors_.end(), Cursor::After);
  scans_open_ = true;
  return absl::OkStatus();
}

absl::Status NoShuffleBackfillExecutor::RefreshScans(
    const absl::flat_hash_set<VirtualNode>& changed) {
  if (changed.empty()) return absl::OkStatus();
  std::erase_if(cursors_, [&](const std::unique_ptr<Cursor>& cursor) {
    return changed.contains(cursor->vnode);
  });
  for (VirtualNode vnode : changed) {
    // A row outside the owned vnodes was refused by the writer already.
    if (vnode >= upstream_table_.vnodes().size() ||
        !upstream_table_.vnodes().Test(vnode)) {
      continue;
    }
    BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<Cursor> cursor, OpenScan(vnode));
    if (cursor != nullptr) cursors_.push_back(std::move(cursor));
  }
  std::make_heap(cursors_.begin(), cursors_.end(), Cursor::After);
  return absl::OkStatus();
}

uint32_t NoShuffleBackfillExecutor::ChunkCapacity() const {
  return SnapshotChunkSize(controls_.limiter().limit(), options_.chunk_size);
}

absl::Status NoShuffleBackfillExecutor::ReadChunk(bool* exhausted) {
  *exhausted = false;
  if (!scans_open_) BACKFILL_RETURN_IF_ERROR(OpenScans());
  const uint32_t capacity = ChunkCapacity();
  std::vector<Row> rows;
  while (rows.size() < capacity && !cursors_.empty()) {
    std::pop_heap(cursors_.begin(), cursors_.end(), Cursor::After);
    Cursor& cursor = *cursors_.back();
    rows.push_back(
        Row(cursor.iterator->row().begin(), cursor.iterator->row().end()));
    cursor.iterator->Next();
    BACKFILL_RETURN_IF_ERROR(cursor.iterator->status());
    if (cursor.iterator->Valid()) {
      cursor.pk_bytes = std::string(cursor.iterator->pk_bytes());
      std::push_heap(cursors_.begin(), cursors_.end(), Cursor::After);
    } else {
      cursors_.pop_back();
    }
  }
  if (!rows.empty()) {
    position_ = ProjectRow(rows.back(), upstream_table_.catalog().pk_indices);
    rows_this_epoch_ += rows.size();
    total_rows_ += rows.size();
    std::vector<Op> ops(rows.size(), Op::kInsert);
    output_.Push(output_mapping_.MapChunk(
        StreamChunk::FromRows(s1_types_, std::move(ops), rows)));
  }
  *exhausted = cursors_.empty();
  return absl::OkStatus();
}

// ---- The epoch loop ---------------------------------------------------------

absl::Status NoShuffleBackfillExecutor::HandleUpstreamChunk(StreamChunk chunk) {
  chunk.Compact();
  if (chunk.cardinality() == 0) return absl::OkStatus();
  upstream_rows_this_epoch_ += chunk.cardinality();
  const std::vector<int>& pk_indices = upstream_table_.catalog().pk_indices;
  const std::vector<OrderType>& pk_orders = upstream_table_.catalog().pk_orders;
  // One comparison with the position per row: at or before it, the row is
  // kept (marking); after it, its vnode's open scan is stale.
  std::vector<bool> keep(chunk.capacity(), false);
  absl::flat_hash_set<VirtualNode> changed;
  for (size_t i = 0; i < chunk.capacity(); ++i) {
    const Row row = chunk.RowAt(i);
    keep[i] = position_.has_value() && CompareRows(ProjectRow(row, pk_indices),
                                                   *position_, pk_orders) <= 0;
    if (!keep[i] && scans_open_) {
      changed.insert(upstream_table_.ComputeVnode(row));
    }
  }
  BACKFILL_RETURN_IF_ERROR(RefreshScans(changed));
  BACKFILL_ASSIGN_OR_RETURN(StreamChunk marked,
                            NormalizeUnmatchedUpdates(std::move(chunk), keep));
  marked.Compact();
  if (marked.cardinality() > 0) {
    output_.Push(output_mapping_.MapChunk(std::move(marked)));
  }
  return absl::OkStatus();
}

NoShuffleBackfillExecutor::Step NoShuffleBackfillExecutor::PollBackfill(
    PollContext& cx) {
  PollResult upstream = upstream_->PollNext(cx);
  if (upstream.is_error()) return Fail(upstream.status());
  if (upstream.is_end()) {
    phase_ = Phase::kEnded;
    CloseScans();
    return Step::kProgress;
  }
  if (upstream.is_ready()) {
    Message& message = upstream.message();
    if (StreamChunk* chunk = std::get_if<StreamChunk>(&message)) {
      if (absl::Status status = HandleUpstreamChunk(std::move(*chunk));
          !status.ok()) {
        return Fail(status);
      }
      return Step::kProgress;
    }
    if (std::holds_alternative<Watermark>(message)) return Step::kProgress;
    Barrier barrier = std::get<Barrier>(std::move(message));
    output_.BarrierArrived(cx.clock().Now());
    if (absl::Status status = ProcessBarrier(std::move(barrier));
        !status.ok()) {
      return Fail(status);
    }
    return Step::kProgress;
  }
  if (controls_.paused()) return Step::kPending;
  if (options_.output_ready && !options_.output_ready(cx)) {
    return Step::kPending;
  }
  const RateLimiter::TryAcquireResult permits =
      controls_.limiter().TryAcquire(ChunkCapacity());
  if (!permits.granted) {
    if (permits.retry_at != absl::InfiniteFuture()) {
      cx.WakeNoLaterThan(permits.retry_at);
    }
    return Step::kPending;
  }
  bool exhausted = false;
  if (absl::Status status = ReadChunk(&exhausted); !status.ok()) {
    return Fail(status);
  }
  if (exhausted) {
    CloseScans();
    phase_ = Phase::kFinishing;
  }
  return Step::kProgress;
}

absl::Status NoShuffleBackfillExecutor::MinimumProgress(bool* exhausted) {
  *exhausted = false;
  if (rows_this_epoch_ != 0 || controls_.paused()) return absl::OkStatus();
  if (!controls_.limiter().TryAcquire(ChunkCapacity()).granted)
    return absl::OkStatus();
  return ReadChunk(exhausted);
}

absl::Status NoShuffleBackfillExecutor::ProcessBarrier(Barrier barrier) {
  bool exhausted = false;
  BACKFILL_RETURN_IF_ERROR(MinimumProgress(&exhausted));
  CloseScans();
  if (exhausted) return FinishBarrier(std::move(barrier));
  if (reporter_ != nullptr) {
    BACKFILL_RETURN_IF_ERROR(
        reporter_->Update(barrier.epoch, barrier.epoch.prev, total_rows_));
  }
  BACKFILL_RETURN_IF_ERROR(PersistState(barrier.epoch, /*finished=*/false));
  controls_.ApplyMutation(barrier);
  const bool stop = barrier.IsStopFor(options_.actor_id);
  output_.Push(std::move(barrier));
  if (stop) phase_ = Phase::kEnded;
  return absl::OkStatus();
}

absl::Status NoShuffleBackfillExecutor::PersistState(EpochPair epoch,
                                                     bool finished) {
  if (rows_this_epoch_ != 0) {
    // The shared position in every owned vnode's row; the actor's rows
    // counted in its first vnode's only, so that sums over vnodes stay right.
    bool first = true;
    for (VirtualNode vnode : state_->owned_vnodes()) {
      BACKFILL_RETURN_IF_ERROR(state_->UpdateProgress(
          vnode, *position_, first ? rows_this_epoch_ : 0));
      first = false;
    }
  }
  // A backfill that never read a row finishes with an all-NULL position.
  if (finished) state_->FinishAll(pk_types_.size());
  metrics_.snapshot_read_row_count.Increment(rows_this_epoch_);
  metrics_.upstream_output_row_count.Increment(upstream_rows_this_epoch_);
  rows_this_epoch_ = 0;
  upstream_rows_this_epoch_ = 0;
  BACKFILL_RETURN_IF_ERROR(WriteProgressRows(*state_, *progress_table_));
  return progress_table_->Commit(epoch);
}

// ---- Finish and steady state ------------------------------------------------

absl::Status NoShuffleBackfillExecutor::FinishBarrier(Barrier barrier) {
  BACKFILL_RETURN_IF_ERROR(PersistState(barrier.epoch, /*finished=*/true));
  if (reporter_ != nullptr) {
    BACKFILL_RETURN_IF_ERROR(reporter_->Finish(barrier.epoch, total_rows_));
  }
  metrics_.vnodes_completed.Set(
      static_cast<double>(progress_table_->vnodes().Count()));
  controls_.ApplyMutation(barrier);
  const bool stop = barrier.IsStopFor(options_.actor_id);
  output_.Push(std::move(barrier));
  phase_ = stop ? Phase::kEnded : Phase::kSteady;
  return absl::OkStatus();
}

NoShuffleBackfillExecutor::Step NoShuffleBackfillExecutor::PollForward(
    PollContext& cx) {
  PollResult upstream = upstream_->PollNext(cx);
  if (upstream.is_pending()) return Step::kPending;
  if (upstream.is_error()) return Fail(upstream.status());
  if (upstream.is_end()) {
    phase_ = Phase::kEnded;
    return Step::kProgress;
  }
  Message& message = upstream.message();
  if (Barrier* barrier = std::get_if<Barrier>(&message)) {
    if (phase_ == Phase::kFinishing) {
      output_.BarrierArrived(cx.clock().Now());
      if (absl::Status status = FinishBarrier(std::move(*barrier));
          !status.ok()) {
        return Fail(status);
      }
      return Step::kProgress;
    }
    if (absl::Status status = progress_table_->Commit(barrier->epoch);
        !status.ok()) {
      return Fail(status);
    }
    if (barrier->IsStopFor(options_.actor_id)) phase_ = Phase::kEnded;
  } else if (const auto* chunk = std::get_if<StreamChunk>(&message)) {
    metrics_.upstream_output_row_count.Increment(chunk->cardinality());
  }
  if (std::optional<Message> mapped =
          output_mapping_.MapMessage(std::move(message))) {
    output_.Push(std::move(*mapped));
  }
  return Step::kProgress;
}

}  // namespace backfill
