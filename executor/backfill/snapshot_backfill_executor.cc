#include "executor/backfill/snapshot_backfill_executor.h"

#include <algorithm>
#include <iterator>
#include <utility>

#include "absl/strings/str_cat.h"
#include "executor/backfill/first_barrier.h"
#include "executor/stream_chunk.h"
#include "serde/row.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

namespace {

// Log columns before the S2 columns.
constexpr int kLogActor = 0;
constexpr int kLogEpoch = 1;
constexpr int kLogSeq = 2;
constexpr int kLogOp = 3;
constexpr int kLogFixedColumns = 4;

// Meta columns.
enum MetaColumn {
  kMetaActor = 0,
  kMetaVnodes,
  kMetaSnapshotEpoch,
  kMetaPhase,
  kMetaSnapshotVnode,
  kMetaSnapshotPk,
  kMetaReplayedEpoch,
  kMetaSnapshotRows,
  kMetaLogBytes,
  kMetaColumns,
};

absl::Status WithContext(const absl::Status& status,
                         absl::string_view context) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(context, ": ", status.message()));
}

TableCatalog Singleton(TableId table_id, std::string name, Schema columns,
                       std::vector<int> pk) {
  TableCatalog catalog;
  catalog.table_id = table_id;
  catalog.name = std::move(name);
  catalog.columns = std::move(columns);
  catalog.pk_orders.assign(pk.size(), OrderType::Ascending());
  catalog.pk_indices = std::move(pk);
  catalog.vnode_count = 1;
  catalog.value_encoding = ValueEncoding::kPositional;
  for (size_t i = 0; i < catalog.columns.size(); ++i) {
    catalog.value_indices.push_back(static_cast<int>(i));
  }
  return catalog;
}

// Same column count, types, pk and vnode count as `expected`.
absl::Status CheckShape(absl::string_view field, const TableCatalog& expected,
                        const TableCatalog& actual) {
  bool ok = expected.columns.size() == actual.columns.size() &&
            expected.pk_indices == actual.pk_indices &&
            expected.vnode_count == actual.vnode_count &&
            actual.dist_key_indices.empty();
  for (size_t i = 0; ok && i < expected.columns.size(); ++i) {
    ok = expected.columns[i].type == actual.columns[i].type;
  }
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        field, " (", actual.DebugString(),
        ") does not have the expected shape ", expected.DebugString()));
  }
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<T> MetaField(const Row& row, int column) {
  const T* value = std::get_if<T>(&row[column]);
  if (value == nullptr) {
    return absl::DataLossError(absl::StrCat(
        "snapshot backfill progress row: column ", column, " is not valid"));
  }
  return *value;
}

}  // namespace

TableCatalog SnapshotLogCatalog(const TableCatalog& upstream,
                                const std::vector<int>& upstream_columns,
                                TableId table_id) {
  Schema columns = {{"actor_id", DataType::kInt32, 0, false},
                    {"epoch", DataType::kInt64, 1, false},
                    {"seq", DataType::kInt64, 2, false},
                    {"op", DataType::kInt16, 3, false}};
  int32_t column_id = kLogFixedColumns;
  for (int index : upstream_columns) {
    ColumnDesc column = upstream.columns[index];
    column.name = absl::StrCat("c_", column.name);
    column.column_id = column_id++;
    column.nullable = true;
    columns.push_back(std::move(column));
  }
  return Singleton(table_id, absl::StrCat(upstream.name, "_snapshot_log"),
                   std::move(columns), {kLogActor, kLogEpoch, kLogSeq});
}

TableCatalog SnapshotMetaCatalog(TableId table_id) {
  Schema columns = {{"actor_id", DataType::kInt32, 0, false},
                    {"vnodes", DataType::kBytea, 1, false},
                    {"snapshot_epoch", DataType::kInt64, 2, false},
                    {"phase", DataType::kInt16, 3, false},
                    {"snapshot_vnode", DataType::kInt32, 4, false},
                    {"snapshot_pk", DataType::kBytea, 5, true},
                    {"replayed_epoch", DataType::kInt64, 6, false},
                    {"snapshot_rows", DataType::kInt64, 7, false},
                    {"log_bytes", DataType::kInt64, 8, false}};
  return Singleton(table_id, "snapshot_backfill_progress", std::move(columns),
                   {kMetaActor});
}

uint64_t LogRowBytes(RowView row) {
  uint64_t bytes = 16;
  for (const Datum& datum : row) {
    bytes += 8;
    if (const auto* text = std::get_if<std::string>(&datum)) {
      bytes += text->size();
    }
  }
  return bytes;
}

absl::StatusOr<std::unique_ptr<SnapshotBackfillExecutor>>
SnapshotBackfillExecutor::Create(
    StateStore& store, const TableCatalog& upstream, const VnodeBitmap& vnodes,
    BoxedExecutor input, std::unique_ptr<StateTable> log_table,
    std::unique_ptr<StateTable> meta_table, ProgressReporter* reporter,
    BackfillMetrics* metrics, const SnapshotBackfillOptions& options) {
  const std::string name =
      absl::StrCat("SnapshotBackfill(actor ", options.actor_id, ", fragment ",
                   options.fragment_id, ")");
  auto invalid = [&name](auto&&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", parts...));
  };
  if (input == nullptr || log_table == nullptr || meta_table == nullptr) {
    return invalid("input, log_table and meta_table are required");
  }
  if (options.chunk_size == 0) return invalid("chunk_size is 0");
  if (vnodes.vnode_count() != upstream.vnode_count || vnodes.None()) {
    return invalid("vnodes: ", vnodes.Count(), " of ", vnodes.vnode_count(),
                   " set; want a non-empty bitmap of ", upstream.vnode_count);
  }
  const int s1_columns = static_cast<int>(upstream.columns.size());
  std::vector<DataType> s2_types;
  for (int index : options.upstream_columns) {
    if (index < 0 || index >= s1_columns) {
      return invalid("upstream_columns: ", index, " is out of range [0, ",
                     s1_columns, ")");
    }
    s2_types.push_back(upstream.columns[index].type.id());
  }
  std::vector<int> s2_pk;
  for (int pk_column : upstream.pk_indices) {
    auto it = std::find(options.upstream_columns.begin(),
                        options.upstream_columns.end(), pk_column);
    if (it == options.upstream_columns.end()) {
      return invalid("upstream_columns: pk column ", pk_column, " is missing");
    }
    s2_pk.push_back(static_cast<int>(it - options.upstream_columns.begin()));
  }
  absl::StatusOr<OutputMapping> mapping = OutputMapping::Create(
      static_cast<int>(s2_types.size()), options.output_indices);
  if (!mapping.ok()) {
    return invalid("output_indices: ", mapping.status().message());
  }
  BACKFILL_RETURN_IF_ERROR(WithContext(
      CheckShape("log_table",
                 SnapshotLogCatalog(upstream, options.upstream_columns, 0),
                 log_table->catalog()),
      name));
  BACKFILL_RETURN_IF_ERROR(WithContext(
      CheckShape("meta_table", SnapshotMetaCatalog(0), meta_table->catalog()),
      name));
  StateTableOptions decoder_options;
  decoder_options.replicated = true;
  decoder_options.op_consistency = OpConsistency::kInconsistent;
  absl::StatusOr<std::unique_ptr<StateTable>> decoder =
      StateTable::Create(upstream, store, vnodes, decoder_options);
  if (!decoder.ok()) return invalid("upstream: ", decoder.status().message());
  ExecutorInfo info;
  info.schema = mapping->MapTypes(s2_types);
  info.stream_key = mapping->MapKey(s2_pk);
  info.identity = absl::StrCat(name, " on table ", upstream.table_id, " (",
                               upstream.name, ")");
  return std::unique_ptr<SnapshotBackfillExecutor>(new SnapshotBackfillExecutor(
      store, upstream, vnodes, std::move(input), std::move(log_table),
      std::move(meta_table), std::move(*decoder), reporter, metrics, options,
      std::move(*mapping), std::move(info), std::move(s2_types)));
}

SnapshotBackfillExecutor::SnapshotBackfillExecutor(
    StateStore& store, const TableCatalog& upstream, const VnodeBitmap& vnodes,
    BoxedExecutor input, std::unique_ptr<StateTable> log_table,
    std::unique_ptr<StateTable> meta_table, std::unique_ptr<StateTable> decoder,
    ProgressReporter* reporter, BackfillMetrics* metrics,
    const SnapshotBackfillOptions& options, OutputMapping output_mapping,
    ExecutorInfo info, std::vector<DataType> s2_types)
    : store_(store),
      upstream_(upstream),
      vnodes_bitmap_(vnodes),
      input_(std::move(input)),
      log_table_(std::move(log_table)),
      meta_table_(std::move(meta_table)),
      decoder_(std::move(decoder)),
      reporter_(reporter),
      metrics_(metrics != nullptr ? *metrics : BackfillMetrics{}),
      options_(options),
      output_mapping_(std::move(output_mapping)),
      info_(std::move(info)),
      s2_types_(std::move(s2_types)),
      controls_(BackfillControls::Options::Of(options_), metrics_),
      output_(metrics_.barrier_latency_seconds),
      commit_waiter_(store) {
  for (VirtualNode vnode : vnodes_bitmap_.set_vnodes()) {
    vnodes_.push_back(vnode);
  }
  metrics_.vnodes_assigned.Set(static_cast<double>(vnodes_.size()));
}

SnapshotBackfillExecutor::~SnapshotBackfillExecutor() = default;

std::string SnapshotBackfillExecutor::Context() const {
  std::string context = info_.identity;
  if (stage_ != Stage::kAwaitFirstBarrier) {
    absl::StrAppend(&context, " at ", meta_table_->epoch().DebugString(),
                    " (snapshot epoch ", snapshot_epoch_.value(), ")");
  }
  return context;
}

SnapshotBackfillExecutor::Step SnapshotBackfillExecutor::Fail(
    const absl::Status& status) {
  final_status_ = WithContext(status, Context());
  output_.Clear();
  EndStream();
  return Step::kProgress;
}

void SnapshotBackfillExecutor::EndStream() {
  stage_ = Stage::kEnded;
  scan_.reset();
}

PollResult SnapshotBackfillExecutor::PollNext(PollContext& cx) {
  while (true) {
    if (!output_.empty()) {
      return PollResult::Ready(output_.Pop(cx.clock().Now()));
    }
    Step step = Step::kProgress;
    switch (stage_) {
      case Stage::kAwaitFirstBarrier:
      case Stage::kInit:
        step = PollStartup(cx);
        break;
      case Stage::kRunning:
        step = PollRunning(cx);
        break;
      case Stage::kEnded:
        return final_status_.ok() ? PollResult::End()
                                  : PollResult::Error(final_status_);
    }
    if (step == Step::kPending) return PollResult::Pending();
  }
}

// ---- Start-up ---------------------------------------------------------------

SnapshotBackfillExecutor::Step SnapshotBackfillExecutor::PollStartup(
    PollContext& cx) {
  if (stage_ == Stage::kAwaitFirstBarrier) {
    absl::StatusOr<std::optional<EpochPair>> first =
        PollFirstBarrier(*input_, cx, controls_, output_);
    if (!first.ok()) return Fail(first.status());
    if (!first->has_value()) return Step::kPending;
    first_epoch_ = **first;
    stage_ = Stage::kInit;
    return Step::kProgress;
  }
  const EpochPair first = first_epoch_;
  // Both tables' InitEpoch below must not block (the store's committed epoch
  // is per table in StateStore's contract).
  if (!commit_waiter_.Ready(
          [&] {
            return meta_table_->ReadyToInit(first) &&
                   log_table_->ReadyToInit(first);
          },
          cx)) {
    return Step::kPending;
  }
  commit_waiter_.Stop();
  if (absl::Status status = meta_table_->InitEpoch(first); !status.ok()) {
    return Fail(status);
  }
  if (absl::Status status = log_table_->InitEpoch(first); !status.ok()) {
    return Fail(status);
  }
  if (absl::Status status = LoadProgress(first); !status.ok()) {
    return Fail(status);
  }
  stage_ = Stage::kRunning;
  return Step::kProgress;
}

std::string SnapshotBackfillExecutor::PinOwner() const {
  return absl::StrCat("snapshot_backfill/table ",
                      meta_table_->catalog().table_id, "/actor ",
                      options_.actor_id);
}

absl::Status SnapshotBackfillExecutor::LoadProgress(EpochPair first) {
  const Row key = {static_cast<int32_t>(options_.actor_id)};
  BACKFILL_ASSIGN_OR_RETURN(std::optional<Row> row, meta_table_->GetRow(key));
  if (!row.has_value()) {
    // A fresh start: the snapshot is the table as committed before the
    // first barrier; every change from here on belongs to a later epoch.
    snapshot_epoch_ = first.prev;
    replayed_epoch_ = first.prev;
  } else {
    BACKFILL_ASSIGN_OR_RETURN(SnapshotActorProgress saved,
                              DecodeSnapshotProgressRow(*row));
    if (saved.vnodes != vnodes_bitmap_.Serialize()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "the saved progress of actor ", options_.actor_id,
          " is for other vnodes: it was written at another parallelism, and "
          "a snapshot backfill (its log and position are per actor) cannot "
          "be rescaled"));
    }
    if (saved.vnode_index > vnodes_.size()) {
      return absl::DataLossError(
          absl::StrCat("snapshot backfill progress row of actor ",
                       options_.actor_id, ": vnode index ", saved.vnode_index,
                       " past its ", vnodes_.size(), " vnodes"));
    }
    snapshot_epoch_ = saved.snapshot_epoch;
    phase_ = saved.phase;
    persisted_phase_ = phase_;
    snapshot_index_ = saved.vnode_index;
    snapshot_pk_ = std::move(saved.pk);
    replayed_epoch_ = saved.replayed_epoch;
    snapshot_rows_ = saved.snapshot_rows;
    if (reporter_ != nullptr) reporter_->SetPersistedRows(snapshot_rows_);
    log_bytes_ = saved.log_bytes;
    peak_log_bytes_ = log_bytes_;
  }
  if (phase_ == Phase::kSnapshot) {
    // Pins E in the store until the replay phase is committed (see the
    // header); a resumed snapshot finds its pin there.
    BACKFILL_RETURN_IF_ERROR(store_.PinEpoch(PinOwner(), snapshot_epoch_));
  } else {
    // Released when the replay phase was reached; a crash before that
    // release committed left the pin in force.
    BACKFILL_RETURN_IF_ERROR(store_.ReleaseEpochPin(PinOwner(), first.curr));
  }
  // A job that joined before a restart reports finish at its first barrier.
  return absl::OkStatus();
}

// ---- The running loop
// --------------------------------------------------------

uint32_t SnapshotBackfillExecutor::ChunkCapacity() const {
  return SnapshotChunkSize(controls_.limiter().limit(), options_.chunk_size);
}

bool SnapshotBackfillExecutor::CanWork(PollContext& cx) {
  waiting_for_permits_ = false;
  if (phase_ == Phase::kJoined) return false;
  if (phase_ == Phase::kSnapshot && controls_.paused()) return false;
  if (options_.output_ready && !options_.output_ready(cx)) return false;
  if (phase_ == Phase::kReplay) return true;
  const RateLimiter::TryAcquireResult permits =
      controls_.limiter().TryAcquire(ChunkCapacity());
  if (!permits.granted) {
    if (permits.retry_at != absl::InfiniteFuture()) {
      cx.WakeNoLaterThan(permits.retry_at);
    }
    waiting_for_permits_ = true;
    return false;
  }
  return true;
}

absl::Status SnapshotBackfillExecutor::Work() {
  return phase_ == Phase::kSnapshot ? ReadSnapshotChunk() : ReplayChunk();
}

SnapshotBackfillExecutor::Step SnapshotBackfillExecutor::PollRunning(
    PollContext& cx) {
  // The log over its budget holds the upstream while the executor can
  // drain (replay) or advance (snapshot, not paused).
  const bool hold = phase_ != Phase::kJoined && log_bytes_ > 0 &&
                    log_bytes_ >= options_.log_budget_bytes &&
                    !(phase_ == Phase::kSnapshot && controls_.paused());
  if (hold || work_turn_) {
    work_turn_ = false;
    if (CanWork(cx)) {
      if (absl::Status status = Work(); !status.ok()) return Fail(status);
      return Step::kProgress;
    }
    // Waiting for rate-limiter permits, the input is read after all: the
    // barriers that change the limit (Throttle, the adaptive controller's
    // among them) must get through.
    if (hold && !waiting_for_permits_) return Step::kPending;
  }
  PollResult result = input_->PollNext(cx);
  if (result.is_error()) return Fail(result.status());
  if (result.is_end()) {
    EndStream();
    return Step::kProgress;
  }
  if (result.is_pending()) {
    if (!CanWork(cx)) return Step::kPending;
    if (absl::Status status = Work(); !status.ok()) return Fail(status);
    return Step::kProgress;
  }
  work_turn_ = true;
  Message& message = result.message();
  if (StreamChunk* chunk = std::get_if<StreamChunk>(&message)) {
    absl::Status status;
    if (phase_ == Phase::kJoined) {
      chunk->Compact();
      upstream_rows_this_epoch_ += chunk->cardinality();
      if (chunk->cardinality() > 0) {
        output_.Push(output_mapping_.MapChunk(std::move(*chunk)));
      }
    } else {
      status = AppendToLog(std::move(*chunk));
    }
    if (!status.ok()) return Fail(status);
    return Step::kProgress;
  }
  if (Watermark* watermark = std::get_if<Watermark>(&message)) {
    // Only after the join do the upstream's watermarks hold for the view.
    if (phase_ == Phase::kJoined) {
      if (std::optional<Message> mapped =
              output_mapping_.MapMessage(std::move(*watermark))) {
        output_.Push(std::move(*mapped));
      }
    }
    return Step::kProgress;
  }
  output_.BarrierArrived(cx.clock().Now());
  if (absl::Status status =
          HandleBarrier(std::get<Barrier>(std::move(message)));
      !status.ok()) {
    return Fail(status);
  }
  return Step::kProgress;
}

// ---- The snapshot
// -------------------------------------------------------------

absl::Status SnapshotBackfillExecutor::ReadSnapshotChunk() {
  const uint32_t capacity = ChunkCapacity();
  std::vector<Row> rows;
  while (rows.size() < capacity && snapshot_index_ < vnodes_.size()) {
    const VirtualNode vnode = vnodes_[snapshot_index_];
    if (scan_ == nullptr) {
      BACKFILL_ASSIGN_OR_RETURN(
          scan_, store_.NewIterator(upstream_.table_id, vnode, PkRange::All(),
                                    snapshot_epoch_, {.fill_cache = false}));
      if (snapshot_pk_.has_value()) {
        scan_->Seek(absl::StrCat(*snapshot_pk_, std::string(1, '\0')));
      } else {
        scan_->SeekToFirst();
      }
    }
    while (rows.size() < capacity && scan_->Valid()) {
      Row row;
      BACKFILL_RETURN_IF_ERROR(
          decoder_->DecodeRow(vnode, scan_->key(), scan_->value(), &row));
      rows.push_back(ProjectRow(row, options_.upstream_columns));
      // The position matters only where the chunk stops inside the vnode
      // (the open scan carries on from there; a vnode read to its end
      // resets it below): one copy per chunk, not per row.
      if (rows.size() == capacity) snapshot_pk_ = std::string(scan_->key());
      scan_->Next();
    }
    BACKFILL_RETURN_IF_ERROR(scan_->status());
    if (!scan_->Valid()) {
      scan_.reset();
      snapshot_pk_.reset();
      ++snapshot_index_;
      metrics_.vnodes_completed.Set(static_cast<double>(snapshot_index_));
    }
  }
  if (!rows.empty()) {
    snapshot_rows_ += rows.size();
    snapshot_rows_this_epoch_ += rows.size();
    std::vector<Op> ops(rows.size(), Op::kInsert);
    output_.Push(output_mapping_.MapChunk(
        StreamChunk::FromRows(s2_types_, std::move(ops), rows)));
  }
  if (snapshot_index_ == vnodes_.size()) {
    // Every row of E has been sent: the log now applies in full. E stays
    // pinned until the checkpoint that commits this phase change.
    BACKFILL_RETURN_IF_ERROR(
        store_.ReleaseEpochPin(PinOwner(), log_table_->epoch()));
    phase_ = Phase::kReplay;
  }
  return absl::OkStatus();
}

// ---- The log
// ------------------------------------------------------------------

absl::Status SnapshotBackfillExecutor::AppendToLog(StreamChunk chunk) {
  chunk.Compact();
  upstream_rows_this_epoch_ += chunk.cardinality();
  const int64_t epoch = static_cast<int64_t>(log_table_->epoch().value());
  for (size_t i = 0; i < chunk.capacity(); ++i) {
    Row s2 = chunk.RowAt(i);
    Row row;
    row.reserve(kLogFixedColumns + s2.size());
    row.push_back(static_cast<int32_t>(options_.actor_id));
    row.push_back(epoch);
    row.push_back(next_seq_++);
    row.push_back(static_cast<int16_t>(chunk.op(i)));
    for (Datum& datum : s2) row.push_back(std::move(datum));
    log_bytes_ += LogRowBytes(row);
    BACKFILL_RETURN_IF_ERROR(log_table_->Insert(row));
  }
  peak_log_bytes_ = std::max(peak_log_bytes_, log_bytes_);
  return absl::OkStatus();
}

absl::Status SnapshotBackfillExecutor::ReplayChunk() {
  const uint32_t capacity = options_.chunk_size;
  const int32_t actor = static_cast<int32_t>(options_.actor_id);
  PkRowRange range;
  // After the last row replayed (its tombstone and those before it need not
  // be stepped over again), else from the actor's first row.
  if (replayed_key_.has_value()) {
    range.start = Row{actor, replayed_key_->first, replayed_key_->second};
  } else {
    range.start = Row{actor};
    range.start_exclusive = false;
  }
  range.exclusive_end = Row{static_cast<int32_t>(actor + 1)};
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<RowIterator> it,
                            log_table_->IterWithVnode(0, range));
  std::vector<Row> log_rows;
  it->SeekToFirst();
  // Never ends a chunk between an update's two halves.
  const auto ends_in_update_delete = [&log_rows] {
    const int16_t* op = std::get_if<int16_t>(&log_rows.back()[kLogOp]);
    return op != nullptr && *op == static_cast<int16_t>(Op::kUpdateDelete);
  };
  while (it->Valid() &&
         (log_rows.size() < capacity || ends_in_update_delete())) {
    log_rows.push_back(Row(it->row().begin(), it->row().end()));
    it->Next();
  }
  BACKFILL_RETURN_IF_ERROR(it->status());
  const bool drained = !it->Valid();
  it.reset();
  if (!log_rows.empty()) {
    std::vector<Op> ops;
    std::vector<Row> rows;
    for (Row& log_row : log_rows) {
      const int16_t* op = std::get_if<int16_t>(&log_row[kLogOp]);
      const int64_t* epoch = std::get_if<int64_t>(&log_row[kLogEpoch]);
      const int64_t* seq = std::get_if<int64_t>(&log_row[kLogSeq]);
      if (op == nullptr || *op < 0 || *op > 3 || epoch == nullptr ||
          seq == nullptr) {
        return absl::DataLossError(absl::StrCat(
            "snapshot log row of actor ", options_.actor_id, " is corrupt"));
      }
      ops.push_back(static_cast<Op>(*op));
      replayed_key_.emplace(*epoch, *seq);
      replayed_epoch_ =
          std::max(replayed_epoch_, Epoch(static_cast<uint64_t>(*epoch)));
      const uint64_t bytes = LogRowBytes(log_row);
      log_bytes_ -= std::min(log_bytes_, bytes);
      BACKFILL_RETURN_IF_ERROR(log_table_->Delete(log_row));
      // The log row is deleted: its S2 datums move into the chunk's row.
      rows.emplace_back(
          std::make_move_iterator(log_row.begin() + kLogFixedColumns),
          std::make_move_iterator(log_row.end()));
    }
    upstream_rows_this_epoch_ += rows.size();
    output_.Push(output_mapping_.MapChunk(
        StreamChunk::FromRows(s2_types_, std::move(ops), rows)));
  }
  if (drained) {
    // Every change received so far has been emitted: join.
    log_bytes_ = 0;
    phase_ = Phase::kJoined;
  }
  return absl::OkStatus();
}

// ---- Barriers
// -------------------------------------------------------------------

absl::Status SnapshotBackfillExecutor::WriteProgress() {
  Row row(kMetaColumns);
  row[kMetaActor] = static_cast<int32_t>(options_.actor_id);
  row[kMetaVnodes] = vnodes_bitmap_.Serialize();
  row[kMetaSnapshotEpoch] = static_cast<int64_t>(snapshot_epoch_.value());
  row[kMetaPhase] = static_cast<int16_t>(phase_);
  row[kMetaSnapshotVnode] = static_cast<int32_t>(snapshot_index_);
  if (snapshot_pk_.has_value()) row[kMetaSnapshotPk] = *snapshot_pk_;
  row[kMetaReplayedEpoch] = static_cast<int64_t>(replayed_epoch_.value());
  row[kMetaSnapshotRows] = static_cast<int64_t>(snapshot_rows_);
  row[kMetaLogBytes] = static_cast<int64_t>(log_bytes_);
  return meta_table_->Insert(row);
}

absl::Status SnapshotBackfillExecutor::HandleBarrier(Barrier barrier) {
  const bool joined_now =
      phase_ == Phase::kJoined && persisted_phase_ != Phase::kJoined;
  if (phase_ != Phase::kJoined || joined_now) {
    BACKFILL_RETURN_IF_ERROR(WriteProgress());
    persisted_phase_ = phase_;
  }
  metrics_.snapshot_read_row_count.Increment(snapshot_rows_this_epoch_);
  metrics_.upstream_output_row_count.Increment(upstream_rows_this_epoch_);
  snapshot_rows_this_epoch_ = 0;
  upstream_rows_this_epoch_ = 0;
  if (reporter_ != nullptr) {
    if (phase_ == Phase::kJoined) {
      if (!finished_) {
        BACKFILL_RETURN_IF_ERROR(
            reporter_->Finish(barrier.epoch, snapshot_rows_));
      }
    } else {
      BACKFILL_RETURN_IF_ERROR(
          reporter_->Update(barrier.epoch, replayed_epoch_, snapshot_rows_));
    }
  }
  if (phase_ == Phase::kJoined) {
    finished_ = true;
    metrics_.vnodes_completed.Set(static_cast<double>(vnodes_.size()));
  }
  BACKFILL_RETURN_IF_ERROR(log_table_->Commit(barrier.epoch));
  BACKFILL_RETURN_IF_ERROR(meta_table_->Commit(barrier.epoch));
  next_seq_ = 0;
  controls_.ApplyMutation(barrier);
  const bool stop = barrier.IsStopFor(options_.actor_id);
  output_.Push(std::move(barrier));
  if (stop) EndStream();
  return absl::OkStatus();
}

absl::StatusOr<SnapshotActorProgress> DecodeSnapshotProgressRow(
    const Row& row) {
  if (row.size() != kMetaColumns) {
    return absl::DataLossError(
        absl::StrCat("snapshot backfill progress row: ", row.size(),
                     " columns, not ", static_cast<int>(kMetaColumns)));
  }
  BACKFILL_ASSIGN_OR_RETURN(int32_t actor, MetaField<int32_t>(row, kMetaActor));
  SnapshotActorProgress saved;
  saved.actor_id = static_cast<ActorId>(actor);
  BACKFILL_ASSIGN_OR_RETURN(saved.vnodes,
                            MetaField<std::string>(row, kMetaVnodes));
  BACKFILL_ASSIGN_OR_RETURN(int64_t epoch,
                            MetaField<int64_t>(row, kMetaSnapshotEpoch));
  BACKFILL_ASSIGN_OR_RETURN(int16_t phase, MetaField<int16_t>(row, kMetaPhase));
  BACKFILL_ASSIGN_OR_RETURN(int32_t vnode,
                            MetaField<int32_t>(row, kMetaSnapshotVnode));
  BACKFILL_ASSIGN_OR_RETURN(int64_t replayed,
                            MetaField<int64_t>(row, kMetaReplayedEpoch));
  BACKFILL_ASSIGN_OR_RETURN(int64_t rows,
                            MetaField<int64_t>(row, kMetaSnapshotRows));
  BACKFILL_ASSIGN_OR_RETURN(int64_t log_bytes,
                            MetaField<int64_t>(row, kMetaLogBytes));
  if (actor < 0 || epoch < 0 || phase < 0 || phase > 2 || vnode < 0 ||
      replayed < 0 || rows < 0 || log_bytes < 0) {
    return absl::DataLossError(absl::StrCat(
        "snapshot backfill progress row of actor ", actor,
        " is out of range (epoch ", epoch, ", phase ", phase, ", vnode index ",
        vnode, ", rows ", rows, ", log bytes ", log_bytes, ")"));
  }
  saved.snapshot_epoch = Epoch(static_cast<uint64_t>(epoch));
  saved.phase = static_cast<SnapshotBackfillExecutor::Phase>(phase);
  saved.vnode_index = static_cast<size_t>(vnode);
  if (const auto* pk = std::get_if<std::string>(&row[kMetaSnapshotPk])) {
    saved.pk = *pk;
  }
  saved.replayed_epoch = Epoch(static_cast<uint64_t>(replayed));
  saved.snapshot_rows = static_cast<uint64_t>(rows);
  saved.log_bytes = static_cast<uint64_t>(log_bytes);
  return saved;
}

const char* SnapshotPhaseName(SnapshotBackfillExecutor::Phase phase) {
  switch (phase) {
    case SnapshotBackfillExecutor::Phase::kSnapshot:
      return "snapshot";
    case SnapshotBackfillExecutor::Phase::kReplay:
      return "replay";
    case SnapshotBackfillExecutor::Phase::kJoined:
      return "joined";
  }
  return "unknown";
}

}  // namespace backfill
