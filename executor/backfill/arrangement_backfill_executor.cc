#include "executor/backfill/arrangement_backfill_executor.h"

#include <algorithm>
#include <cassert>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/backfill/first_barrier.h"
#include "executor/backfill/marking.h"
#include "executor/backfill/progress_rows.h"
#include "executor/stream_chunk.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

RowOp ToRowOp(Op op) {
  switch (op) {
    case Op::kInsert:
      return RowOp::kInsert;
    case Op::kDelete:
      return RowOp::kDelete;
    case Op::kUpdateDelete:
      return RowOp::kUpdateDelete;
    case Op::kUpdateInsert:
      return RowOp::kUpdateInsert;
  }
  return RowOp::kInsert;
}

absl::Status WithContext(const absl::Status& status,
                         absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(context, ": ", status.message()));
}

}  // namespace

absl::StatusOr<std::unique_ptr<ArrangementBackfillExecutor>>
ArrangementBackfillExecutor::Create(
    std::unique_ptr<ReplicatedStateTable> upstream_table,
    BoxedExecutor upstream, std::unique_ptr<StateTable> progress_table,
    ProgressReporter* reporter, BackfillMetrics* metrics,
    const ArrangementBackfillOptions& options) {
  const std::string name =
      absl::StrCat("ArrangementBackfill(actor ", options.actor_id,
                   ", fragment ", options.fragment_id, ")");
  if (upstream_table == nullptr || upstream == nullptr ||
      progress_table == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(name,
                     ": upstream_table, upstream and progress_table "
                     "are required"));
  }
  if (options.chunk_size == 0) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": chunk_size is 0"));
  }
  if (options.max_vnode_scans_per_step == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": max_vnode_scans_per_step is 0"));
  }
  const TableCatalog& upstream_catalog = upstream_table->catalog();
  std::vector<DataType> s2_types;
  for (int s1 : upstream_table->output_indices()) {
    s2_types.push_back(upstream_catalog.columns[s1].type);
  }
  absl::StatusOr<OutputMapping> mapping = OutputMapping::Create(
      static_cast<int>(s2_types.size()), options.output_indices);
  if (!mapping.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": output_indices: ", mapping.status().message()));
  }
  if (absl::Status status = ValidateProgressTable(
          upstream_catalog, upstream_table->vnodes(), *progress_table);
      !status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", status.message()));
  }
  ExecutorInfo info;
  info.schema = mapping->MapTypes(s2_types);
  info.stream_key = mapping->MapKey(upstream_table->pk_in_output_indices());
  info.identity = absl::StrCat(name, " on table ", upstream_catalog.table_id,
                               " (", upstream_catalog.name, ")");
  return std::unique_ptr<ArrangementBackfillExecutor>(
      new ArrangementBackfillExecutor(
          std::move(upstream_table), std::move(upstream),
          std::move(progress_table), reporter, metrics, options,
          std::move(*mapping), std::move(info)));
}

ArrangementBackfillExecutor::ArrangementBackfillExecutor(
    std::unique_ptr<ReplicatedStateTable> upstream_table,
    BoxedExecutor upstream, std::unique_ptr<StateTable> progress_table,
    ProgressReporter* reporter, BackfillMetrics* metrics,
    const ArrangementBackfillOptions& options, OutputMapping output_mapping,
    ExecutorInfo info)
    : upstream_table_(std::move(upstream_table)),
      upstream_(std::move(upstream)),
      progress_table_(std::move(progress_table)),
      reporter_(reporter),
      metrics_(metrics != nullptr ? *metrics : BackfillMetrics{}),
      options_(options),
      output_mapping_(std::move(output_mapping)),
      info_(std::move(info)),
      controls_(BackfillControls::Options::Of(options_), metrics_),
      output_(metrics_.barrier_latency_seconds),
      commit_waiter_(upstream_table_->store()) {
  const TableCatalog& catalog = upstream_table_->catalog();
  pk_orders_ = catalog.pk_orders;
  pk_types_ = catalog.PkTypes();
}

ArrangementBackfillExecutor::~ArrangementBackfillExecutor() {
  snapshot_.reset();
  commit_waiter_.Stop();
}

std::string ArrangementBackfillExecutor::Context() const {
  std::string context = info_.identity;
  if (progress_table_ != nullptr && phase_ != Phase::kAwaitFirstBarrier) {
    absl::StrAppend(&context, " at ", progress_table_->epoch().DebugString());
  }
  return context;
}

ArrangementBackfillExecutor::Step ArrangementBackfillExecutor::Fail(
    const absl::Status& status) {
  final_status_ = WithContext(status, Context());
  phase_ = Phase::kEnded;
  output_.Clear();
  snapshot_.reset();
  return Step::kProgress;
}

ArrangementBackfillExecutor::Step ArrangementBackfillExecutor::EndStream() {
  phase_ = Phase::kEnded;
  snapshot_.reset();
  return Step::kProgress;
}

PollResult ArrangementBackfillExecutor::PollNext(PollContext& cx) {
  while (true) {
    if (!output_.empty()) {
      return PollResult::Ready(output_.Pop(cx.clock().Now()));
    }
    Step step = Step::kProgress;
    switch (phase_) {
      case Phase::kAwaitFirstBarrier:
      case Phase::kInitProgressTable:
      case Phase::kInitUpstreamTable:
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

absl::Status ArrangementBackfillExecutor::LoadProgress() {
  BACKFILL_ASSIGN_OR_RETURN(BackfillState loaded,
                            ReadProgressRows(*progress_table_, pk_types_));
  state_.emplace(std::move(loaded));
  num_vnodes_completed_ = 0;
  for (VirtualNode vnode : state_->owned_vnodes()) {
    num_vnodes_completed_ +=
        std::holds_alternative<Completed>(*state_->Get(vnode)) ? 1 : 0;
  }
  metrics_.vnodes_completed.Set(static_cast<double>(num_vnodes_completed_));
  total_snapshot_rows_ = state_->total_row_count();
  if (reporter_ != nullptr) reporter_->SetPersistedRows(total_snapshot_rows_);
  metrics_.vnodes_assigned.Set(static_cast<double>(state_->num_vnodes()));
  return absl::OkStatus();
}

ArrangementBackfillExecutor::Step ArrangementBackfillExecutor::PollStartup(
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
  if (phase_ == Phase::kInitProgressTable) {
    if (!commit_waiter_.Ready(
            [&] { return progress_table_->ReadyToInit(first); }, cx)) {
      return Step::kPending;
    }
    if (absl::Status status = progress_table_->InitEpoch(first); !status.ok()) {
      return Fail(status);
    }
    if (absl::Status status = LoadProgress(); !status.ok()) return Fail(status);
    phase_ = Phase::kInitUpstreamTable;
  }
  if (phase_ == Phase::kInitUpstreamTable) {
    if (!commit_waiter_.Ready(
            [&] { return upstream_table_->ReadyToInit(first); }, cx)) {
      return Step::kPending;
    }
    if (absl::Status status = upstream_table_->InitEpoch(first); !status.ok()) {
      return Fail(status);
    }
    commit_waiter_.Stop();
    if (state_->IsCompletelyFinished()) {
      phase_ = Phase::kFinishing;
    } else {
      phase_ = Phase::kBackfill;
      snapshot_.emplace(*upstream_table_, *state_, controls_.limiter(),
                        options_.chunk_size, options_.max_vnode_scans_per_step);
    }
  }
  return Step::kProgress;
}

// ---- The epoch loop ---------------------------------------------------------

absl::Status ArrangementBackfillExecutor::HandleSnapshotChunk(
    VnodeChunk chunk) {
  DataChunk& data = chunk.data;
  const VirtualNode vnode = chunk.vnode;
  const size_t rows = data.cardinality();
  if (rows == 0) return absl::OkStatus();
  Row last = data.RowAt(data.capacity() - 1);
  Row pos;
  pos.reserve(upstream_table_->pk_in_output_indices().size());
  for (int position : upstream_table_->pk_in_output_indices()) {
    pos.push_back(std::move(last[position]));
  }
  BACKFILL_RETURN_IF_ERROR(state_->UpdateProgress(vnode, std::move(pos), rows));
  ++progress_version_;
  snapshot_rows_this_epoch_ += rows;
  total_snapshot_rows_ += rows;
  std::vector<Op> ops(data.capacity(), Op::kInsert);
  output_.Push(
      output_mapping_.MapChunk(StreamChunk(std::move(ops), std::move(data))));
  return absl::OkStatus();
}

absl::Status ArrangementBackfillExecutor::HandleSnapshotRead(
    SnapshotRead& read) {
  if (read.chunk.has_value()) {
    BACKFILL_RETURN_IF_ERROR(HandleSnapshotChunk(std::move(*read.chunk)));
  }
  // A vnode whose scan ended has sent every row it had at the start of the
  // epoch (the reader reads the replicated table as of then), so every
  // change of this epoch and later applies: Completed now (CONTRACT §4.2).
  for (VirtualNode vnode : read.finished_vnodes) {
    BACKFILL_RETURN_IF_ERROR(state_->FinishProgress(vnode, pk_types_.size()));
    ++num_vnodes_completed_;
    ++progress_version_;
  }
  return absl::OkStatus();
}

absl::Status ArrangementBackfillExecutor::FlushSnapshot() {
  BACKFILL_ASSIGN_OR_RETURN(std::vector<VnodeChunk> chunks, snapshot_->Flush());
  for (VnodeChunk& chunk : chunks) {
    BACKFILL_RETURN_IF_ERROR(HandleSnapshotChunk(std::move(chunk)));
  }
  return absl::OkStatus();
}

ArrangementBackfillExecutor::Step ArrangementBackfillExecutor::PollBackfill(
    PollContext& cx) {
  // Upstream always has priority.
  PollResult upstream = upstream_->PollNext(cx);
  if (upstream.is_error()) return Fail(upstream.status());
  if (upstream.is_end()) return EndStream();
  if (upstream.is_ready()) {
    Message& message = upstream.message();
    if (StreamChunk* chunk = std::get_if<StreamChunk>(&message)) {
      if (absl::Status status = HandleUpstreamChunk(std::move(*chunk));
          !status.ok()) {
        return Fail(status);
      }
      return Step::kProgress;
    }
    if (std::holds_alternative<Watermark>(message)) {
      return Step::kProgress;  // dropped during the backfill
    }
    Barrier barrier = std::get<Barrier>(std::move(message));
    output_.BarrierArrived(cx.clock().Now());
    if (absl::Status status = ProcessBarrier(std::move(barrier));
        !status.ok()) {
      return Fail(status);
    }
    return Step::kProgress;
  }
  // Upstream has nothing ready (and will wake us): read the snapshot, if
  // downstream has room for it (else it wakes us when it has). Frozen: the
  // position stays where it is until the barrier.
  if (frozen_ || controls_.paused()) return Step::kPending;
  if (options_.output_ready && !options_.output_ready(cx)) {
    return Step::kPending;
  }
  const size_t max_rows = std::max<size_t>(options_.chunk_size, 64);
  absl::StatusOr<SnapshotRead> read = snapshot_->Read(max_rows);
  if (!read.ok()) return Fail(read.status());
  if (absl::Status status = HandleSnapshotRead(*read); !status.ok()) {
    return Fail(status);
  }
  switch (read->outcome) {
    case SnapshotRead::kChunk:
      return Step::kProgress;
    case SnapshotRead::kRowLimit:
      return Step::kProgress;
    case SnapshotRead::kBlocked:
      // Waiting for permits (until retry_at) or for upstream.
      if (read->retry_at != absl::InfiniteFuture()) {
        cx.WakeNoLaterThan(read->retry_at);
      }
      return Step::kPending;
    case SnapshotRead::kExhausted:
      if (absl::Status status = EndOfSnapshot(); !status.ok()) {
        return Fail(status);
      }
      phase_ = Phase::kFinishing;
      return Step::kProgress;
  }
  return Step::kProgress;
}

absl::Status ArrangementBackfillExecutor::HandleUpstreamChunk(
    StreamChunk chunk) {
  chunk.Compact();
  if (chunk.cardinality() == 0) return absl::OkStatus();
  const size_t bytes = chunk.EstimatedBytes();
  if (!frozen_ &&
      upstream_buffer_bytes_ + bytes > options_.upstream_buffer_budget_bytes) {
    // Freeze the position for the rest of the epoch (CONTRACT §10). First
    // the minimum progress the barrier would have made (a busy upstream
    // must not starve the snapshot), then the builders' rows: from here on
    // the positions are the ones the barrier will mark against.
    bool exhausted = false;
    BACKFILL_RETURN_IF_ERROR(MinimumProgress(&exhausted));
    if (exhausted) {
      // The snapshot ended: EndOfSnapshot forwarded the buffer unmarked and
      // every later change of the epoch applies too (CONTRACT §4.6).
      metrics_.upstream_output_row_count.Increment(chunk.cardinality());
      output_.Push(output_mapping_.MapChunk(std::move(chunk)));
      phase_ = Phase::kFinishing;
      return absl::OkStatus();
    }
    BACKFILL_RETURN_IF_ERROR(FlushSnapshot());
    frozen_ = true;
    ++num_buffer_freezes_;
    BACKFILL_RETURN_IF_ERROR(ForwardBuffered());
  }
  if (frozen_) return ForwardMarked(chunk);
  upstream_buffer_rows_ += chunk.cardinality();
  upstream_buffer_bytes_ += bytes;
  peak_upstream_buffer_bytes_ =
      std::max(peak_upstream_buffer_bytes_, upstream_buffer_bytes_);
  metrics_.upstream_buffer_rows.Set(static_cast<double>(upstream_buffer_rows_));
  metrics_.upstream_buffer_bytes.Set(
      static_cast<double>(upstream_buffer_bytes_));
  BufferedChunk& buffered = upstream_buffer_.emplace_back();
  buffered.pending.assign(chunk.capacity(), true);
  buffered.pending_ops = chunk.ops();
  buffered.vnodes = VnodesOfRows(
      chunk, upstream_table_->pk_in_output_indices(),
      [this](RowView pk) { return upstream_table_->ComputeVnodeByPk(pk); });
  buffered.chunk = std::move(chunk);
  // A key's older changes go first: if a position moved since the buffer
  // was last released, the older chunks are released before this one.
  if (progress_version_ != released_version_) return ReleaseBuffered();
  return Release(buffered);
}

absl::Status ArrangementBackfillExecutor::Release(BufferedChunk& buffered) {
  BACKFILL_ASSIGN_OR_RETURN(
      std::vector<bool> keep,
      KeptByProgress(buffered.chunk, &buffered.pending, buffered.vnodes,
                     upstream_table_->pk_in_output_indices(), pk_orders_,
                     *state_));
  if (std::none_of(keep.begin(), keep.end(), [](bool kept) { return kept; })) {
    return absl::OkStatus();
  }
  std::vector<bool> rest(keep.size());
  for (size_t row = 0; row < keep.size(); ++row) {
    rest[row] = buffered.pending[row] && !keep[row];
  }
  BACKFILL_ASSIGN_OR_RETURN(
      std::optional<std::vector<Op>> kept_ops,
      RepairUpdatePairs(buffered.pending_ops, buffered.pending, keep));
  BACKFILL_ASSIGN_OR_RETURN(
      std::optional<std::vector<Op>> rest_ops,
      RepairUpdatePairs(buffered.pending_ops, buffered.pending, rest));
  StreamChunk released = buffered.chunk;
  released.SetOps(kept_ops.has_value() ? *std::move(kept_ops)
                                       : buffered.pending_ops);
  released.SetVisibility(std::move(keep));
  released.Compact();
  output_.Push(output_mapping_.MapChunk(std::move(released)));
  if (rest_ops.has_value()) buffered.pending_ops = *std::move(rest_ops);
  buffered.pending = std::move(rest);
  buffered.released_some = true;
  return absl::OkStatus();
}

absl::Status ArrangementBackfillExecutor::ReleaseBuffered() {
  for (BufferedChunk& buffered : upstream_buffer_) {
    BACKFILL_RETURN_IF_ERROR(Release(buffered));
  }
  released_version_ = progress_version_;
  return absl::OkStatus();
}

StreamChunk ArrangementBackfillExecutor::PendingRows(
    const BufferedChunk& buffered) {
  StreamChunk rows = buffered.chunk;
  if (buffered.released_some) {
    rows.SetOps(buffered.pending_ops);
    rows.SetVisibility(buffered.pending);
  }
  return rows;
}

absl::Status ArrangementBackfillExecutor::ForwardBuffered() {
  for (const BufferedChunk& buffered : upstream_buffer_) {
    if (buffered.released_some) {
      BACKFILL_RETURN_IF_ERROR(EmitMarked(PendingRows(buffered)));
    } else {
      BACKFILL_RETURN_IF_ERROR(EmitMarked(buffered.chunk));
    }
    BACKFILL_RETURN_IF_ERROR(WriteReplica(buffered.chunk));
  }
  upstream_buffer_.clear();
  upstream_buffer_rows_ = upstream_buffer_bytes_ = 0;
  metrics_.upstream_buffer_rows.Set(0);
  metrics_.upstream_buffer_bytes.Set(0);
  return absl::OkStatus();
}

absl::Status ArrangementBackfillExecutor::ForwardMarked(
    const StreamChunk& chunk) {
  BACKFILL_RETURN_IF_ERROR(EmitMarked(chunk));
  return WriteReplica(chunk);
}

absl::Status ArrangementBackfillExecutor::EmitMarked(const StreamChunk& chunk) {
  BACKFILL_ASSIGN_OR_RETURN(
      StreamChunk marked,
      MarkChunkByVnode(
          chunk, upstream_table_->pk_in_output_indices(), pk_orders_,
          [this](RowView pk) { return upstream_table_->ComputeVnodeByPk(pk); },
          *state_));
  if (marked.cardinality() > 0) {
    marked.Compact();
    output_.Push(output_mapping_.MapChunk(std::move(marked)));
  }
  return absl::OkStatus();
}

absl::Status ArrangementBackfillExecutor::WriteReplica(
    const StreamChunk& chunk) {
  upstream_rows_this_epoch_ += chunk.cardinality();
  for (size_t i = 0; i < chunk.capacity(); ++i) {
    if (!chunk.is_visible(i)) continue;
    BACKFILL_RETURN_IF_ERROR(
        upstream_table_->Write(ToRowOp(chunk.op(i)), chunk.RowAt(i)));
  }
  return absl::OkStatus();
}

absl::Status ArrangementBackfillExecutor::MinimumProgress(bool* exhausted) {
  *exhausted = false;
  if (snapshot_rows_this_epoch_ != 0 || controls_.paused() ||
      !snapshot_->AcquirePermitsNow()) {
    return absl::OkStatus();
  }
  BACKFILL_ASSIGN_OR_RETURN(SnapshotRead read,
                            snapshot_->Read(snapshot_->chunk_capacity()));
  BACKFILL_RETURN_IF_ERROR(HandleSnapshotRead(read));
  if (read.outcome == SnapshotRead::kExhausted) {
    BACKFILL_RETURN_IF_ERROR(EndOfSnapshot());
    *exhausted = true;
  }
  return absl::OkStatus();
}

absl::Status ArrangementBackfillExecutor::EndOfSnapshot() {
  BACKFILL_RETURN_IF_ERROR(FlushSnapshot());
  last_snapshot_stats_ = snapshot_->stats();
  snapshot_.reset();
  // Every vnode was fully sent as of this epoch's start, so every change of
  // this epoch applies: forward them unmarked (RisingWave marks them in the
  // minimum-progress path and can lose changes there).
  // (Never frozen here: a frozen epoch reads no snapshot rows.)
  assert(!frozen_);
  for (BufferedChunk& buffered : upstream_buffer_) {
    upstream_rows_this_epoch_ += buffered.chunk.cardinality();
    StreamChunk rows = buffered.released_some ? PendingRows(buffered)
                                              : std::move(buffered.chunk);
    rows.Compact();
    if (rows.cardinality() > 0) {
      output_.Push(output_mapping_.MapChunk(std::move(rows)));
    }
  }
  upstream_buffer_.clear();
  upstream_buffer_rows_ = upstream_buffer_bytes_ = 0;
  metrics_.snapshot_read_row_count.Increment(snapshot_rows_this_epoch_);
  metrics_.upstream_output_row_count.Increment(upstream_rows_this_epoch_);
  metrics_.upstream_buffer_rows.Set(0);
  metrics_.upstream_buffer_bytes.Set(0);
  snapshot_rows_this_epoch_ = 0;
  upstream_rows_this_epoch_ = 0;
  frozen_ = false;
  return absl::OkStatus();
}

absl::Status ArrangementBackfillExecutor::ProcessBarrier(Barrier barrier) {
  // Minimum progress: read up to one chunk if this epoch read nothing yet
  // (not when frozen: the position must stay where the forwarded changes
  // were marked; the freeze made this read already).
  if (!frozen_) {
    bool exhausted = false;
    BACKFILL_RETURN_IF_ERROR(MinimumProgress(&exhausted));
    if (exhausted) return FinishBarrier(std::move(barrier));
  }
  // (a) close the snapshot reader (the replicated table is written below)
  // and flush the builders: positions now cover every row sent this epoch.
  BACKFILL_RETURN_IF_ERROR(FlushSnapshot());
  // (b) mark and emit the buffered changes not released yet; replicate
  // them all unmarked.
  BACKFILL_RETURN_IF_ERROR(ForwardBuffered());
  frozen_ = false;
  // (c) seal the replicated epoch.
  BACKFILL_RETURN_IF_ERROR(upstream_table_->Commit(barrier.epoch));
  // (d) metrics.
  metrics_.vnodes_completed.Set(static_cast<double>(num_vnodes_completed_));
  metrics_.snapshot_read_row_count.Increment(snapshot_rows_this_epoch_);
  metrics_.upstream_output_row_count.Increment(upstream_rows_this_epoch_);
  metrics_.upstream_buffer_rows.Set(0);
  metrics_.upstream_buffer_bytes.Set(0);
  snapshot_rows_this_epoch_ = 0;
  upstream_rows_this_epoch_ = 0;
  // (e) progress report.
  if (reporter_ != nullptr) {
    BACKFILL_RETURN_IF_ERROR(reporter_->Update(
        barrier.epoch, barrier.epoch.prev, total_snapshot_rows_));
  }
  // (f) persist changed vnodes and commit the progress table.
  BACKFILL_RETURN_IF_ERROR(PersistState(barrier.epoch));
  // (g) mutations, (h) the barrier.
  ApplyMutation(barrier);
  const bool stop = barrier.IsStopFor(options_.actor_id);
  output_.Push(std::move(barrier));
  if (stop) phase_ = Phase::kEnded;
  return absl::OkStatus();
}

absl::Status ArrangementBackfillExecutor::PersistState(EpochPair epoch) {
  BACKFILL_RETURN_IF_ERROR(WriteProgressRows(*state_, *progress_table_));
  return progress_table_->Commit(epoch);
}

void ArrangementBackfillExecutor::ApplyMutation(const Barrier& barrier) {
  if (controls_.ApplyMutation(barrier) && snapshot_.has_value()) {
    snapshot_->Resize();
  }
}

// ---- Finish and steady state ------------------------------------------------

absl::Status ArrangementBackfillExecutor::FinishBarrier(Barrier barrier) {
  state_->FinishAll(pk_types_.size());
  BACKFILL_RETURN_IF_ERROR(PersistState(barrier.epoch));
  if (reporter_ != nullptr) {
    BACKFILL_RETURN_IF_ERROR(
        reporter_->Finish(barrier.epoch, total_snapshot_rows_));
  }
  metrics_.vnodes_completed.Set(static_cast<double>(state_->num_vnodes()));
  ApplyMutation(barrier);
  const bool stop = barrier.IsStopFor(options_.actor_id);
  output_.Push(std::move(barrier));
  phase_ = stop ? Phase::kEnded : Phase::kSteady;
  return absl::OkStatus();
}

ArrangementBackfillExecutor::Step ArrangementBackfillExecutor::PollForward(
    PollContext& cx) {
  PollResult upstream = upstream_->PollNext(cx);
  if (upstream.is_pending()) return Step::kPending;
  if (upstream.is_error()) return Fail(upstream.status());
  if (upstream.is_end()) return EndStream();
  Message& message = upstream.message();
  if (Barrier* barrier = std::get_if<Barrier>(&message)) {
    if (phase_ == Phase::kFinishing) {
      // The finish barrier: FinishBarrier queues it.
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
  }
  if (std::optional<Message> mapped =
          output_mapping_.MapMessage(std::move(message))) {
    output_.Push(std::move(*mapped));
  }
  return Step::kProgress;
}

}  // namespace backfill
