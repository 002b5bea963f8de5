// SnapshotBackfillExecutor: RisingWave's current default backfill (issue 20).
// It reads the upstream table's committed snapshot at ONE fixed epoch E while
// the upstream keeps running, keeps the upstream's changes after E in a log
// persisted in the state store, replays that log once the snapshot is done,
// and then forwards the upstream's changes directly.
//
// clang-format off
//   BACKFILL_ASSIGN_OR_RETURN(auto backfill,
//       SnapshotBackfillExecutor::Create(store, upstream_catalog, vnodes,
//           std::move(upstream), std::move(log_table), std::move(meta_table),
//           reporter, metrics, options));
// clang-format on
//
// Where it sits: like the arrangement backfill, apart from the upstream's
// writer: it receives the changes of its vnodes (in S2) and the barriers
// from a dispatcher, and reads the committed table through the store.
//
// Phases (persisted, so a crash resumes in the phase it left):
//  * kSnapshot. E is the committed epoch before the first barrier of a fresh
//    start (`first.prev`); the table's committed data at E is read vnode by
//    vnode (ascending), in pk order, through committed-store iterators at E:
//    later commits never change what they see. E is pinned in the store
//    (StateStore::PinEpoch, owner "snapshot_backfill/table <progress
//    table>/actor <id>") so that garbage collection keeps the versions E
//    needs; the pin is persisted with the checkpoints, so a resumed
//    snapshot finds E intact, also in a reopened store. It is released
//    with the checkpoint that commits the replay phase (and again at a
//    start-up past the snapshot phase: releases are idempotent). Every
//    change that arrives (they all belong to epochs after E) is appended to
//    the log and not emitted.
//  * kReplay. The snapshot is done: the log is emitted in (epoch, seq)
//    order, one chunk at a time, each row deleted from the log as it is
//    emitted (the log's first row is the replay position). Changes that
//    arrive meanwhile are still appended. When the log is empty, every
//    change received so far has been emitted: the executor joins.
//  * kJoined. Every change is forwarded at once (in S3); the barrier after
//    the join reports `finish`.
//
// Barriers never wait for the snapshot or the replay: a barrier is handled
// as soon as it arrives (the log and the progress row written and sealed,
// the mutation applied, the barrier emitted), with no read before it. The
// snapshot and the replay advance between upstream messages: after each
// upstream message the executor reads (or replays) one chunk if it may,
// then looks at upstream again, so neither side starves the other; only
// the messages already queued to the downstream stand in a barrier's way.
//
// The log's byte budget (`log_budget_bytes`; bytes as LogRowBytes counts
// them, of the rows not yet replayed, persisted with the progress): while
// the log holds at least the budget and the executor can drain or advance
// (replaying, or reading the snapshot when not paused and not waiting for
// rate-limiter permits), it stops reading its input, so the channel fills
// and the upstream blocks (back-pressure).
// Memory stays bounded: the log lives in the state store (only the current
// epoch's rows sit in its write buffer); the snapshot and the replay hold
// one chunk. Paused (Pause, a paused fragment, rate 0) in the snapshot
// phase, the input is read whatever the log holds: holding the upstream
// then would also hold the barrier that resumes the backfill; likewise while
// the snapshot waits for rate-limiter permits (a Throttle, or the adaptive
// controller reacting to the held barriers, must get through). Two costs of
// this runtime, where barriers travel with the changes: while the upstream
// is held, no barrier reaches the backfill, so what it emits meanwhile
// waits in the view's epoch buffer until the next barrier; and the budget
// is checked before each input read, so the log can exceed it by one
// chunk.
//
// The progress row (SnapshotMetaCatalog, one per actor, keyed by actor id):
// the actor's vnodes (serialized bitmap), E, the phase, the snapshot
// position (the vnode being read and the pk bytes of its last row sent,
// NULL if none yet), the epoch of the last replayed log row, the snapshot
// rows sent, the log's bytes. It is written at every barrier before join
// and at the join's barrier; it commits atomically with the view and the
// log (CONTRACT §3), so after a crash the three agree. A row with other
// vnodes means another parallelism: FailedPrecondition (the log and the
// position are the actor's; the kind cannot be rescaled). A row that does
// not decode is DataLoss.
//
// Oracle (what the tests check at every barrier the executor emits): in
// kSnapshot the view equals the table at E restricted to the rows at or
// before the position ((vnode, pk) order over the owned vnodes); in kReplay
// it equals the table at E (owned vnodes) with a prefix of the log applied;
// after the join it equals the upstream table (owned vnodes) as of the
// barrier's `prev`.
//
// Schemas: upstream chunks are S2 (`upstream_columns` of S1); the snapshot
// is read in S1 and narrowed to S2; the executor emits S3 = `output_indices`
// into S2. The log stores S2 rows.
//
// Thread-safety: an Executor (one task at a time). The store, the reporter
// and the metrics' Registry must outlive it.
#ifndef EXECUTOR_BACKFILL_SNAPSHOT_BACKFILL_EXECUTOR_H_
#define EXECUTOR_BACKFILL_SNAPSHOT_BACKFILL_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/backfill/backfill_controls.h"
#include "executor/backfill/backfill_output.h"
#include "executor/backfill/commit_waiter.h"
#include "executor/backfill/output_mapping.h"
#include "executor/backfill/progress_reporter.h"
#include "executor/barrier.h"
#include "executor/executor.h"
#include "metrics/backfill_metrics.h"
#include "ratelimit/rate_limit.h"
#include "serde/row.h"
#include "serde/vnode_bitmap.h"
#include "storage/state_store.h"
#include "storage/state_table.h"
#include "storage/table_catalog.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

// The default log budget: 64 MiB per actor.
inline constexpr uint64_t kDefaultSnapshotLogBudgetBytes = uint64_t{64} << 20;

// The log table of a snapshot backfill over `upstream` whose changes carry
// `upstream_columns` (S2): [actor_id INT32, epoch INT64, seq INT64, op INT16,
// the S2 columns (nullable)], pk (actor_id, epoch, seq), a singleton (one
// vnode). REQUIRES: every index of `upstream_columns` < upstream's columns.
TableCatalog SnapshotLogCatalog(const TableCatalog& upstream,
                                const std::vector<int>& upstream_columns,
                                TableId table_id);
// The progress table of snapshot backfills: [actor_id INT32, vnodes BYTEA,
// snapshot_epoch INT64, phase INT16, snapshot_vnode INT32, snapshot_pk BYTEA
// (nullable), replayed_epoch INT64, snapshot_rows INT64, log_bytes INT64],
// pk (actor_id), a singleton.
TableCatalog SnapshotMetaCatalog(TableId table_id);
// The bytes a log row counts for in the budget: 16 + per datum 8, plus the
// length of a string's bytes.
uint64_t LogRowBytes(RowView row);

struct SnapshotBackfillOptions {
  ActorId actor_id = 0;
  FragmentId fragment_id = 0;
  // S2: indices into S1 of the columns upstream chunks carry. Required;
  // must contain every pk column.
  std::vector<int> upstream_columns;
  // S3: indices into S2 of the emitted columns. Required.
  std::vector<int> output_indices;
  // Rows per snapshot / replay chunk; default 256; >= 1. A snapshot chunk
  // holds max(2, min(rate_limit, chunk_size)) rows.
  uint32_t chunk_size = 256;
  // Snapshot rows per second of this actor (not the replay); default
  // Disabled; Throttle mutations change it.
  RateLimit rate_limit = RateLimit::Disabled();
  Clock* clock = nullptr;
  // The log's byte budget (see above); 0 = hold the upstream whenever the
  // log is not empty and the executor can make progress.
  uint64_t log_budget_bytes = kDefaultSnapshotLogBudgetBytes;
  // Optional downstream back-pressure: snapshot and replay chunks are
  // produced only while it returns true.
  std::function<bool(PollContext&)> output_ready;
};

class SnapshotBackfillExecutor final : public Executor {
 public:
  enum class Phase { kSnapshot = 0, kReplay = 1, kJoined = 2 };

  // Errors: InvalidArgument naming the field when a column index is out of
  // range, a pk column is missing from upstream_columns, chunk_size is 0,
  // `vnodes` is empty or of another size than the upstream's vnode count,
  // or the log or meta table's catalog is not the expected shape.
  // `log_table` and `meta_table` (SnapshotLogCatalog, SnapshotMetaCatalog;
  // one vnode, VnodeBitmap::All(1)) must be created with
  // OpConsistency::kInconsistent: the progress row is overwritten in place
  // and log rows are deleted by key.
  static absl::StatusOr<std::unique_ptr<SnapshotBackfillExecutor>> Create(
      StateStore& store, const TableCatalog& upstream,
      const VnodeBitmap& vnodes, BoxedExecutor input,
      std::unique_ptr<StateTable> log_table,
      std::unique_ptr<StateTable> meta_table, ProgressReporter* reporter,
      BackfillMetrics* metrics, const SnapshotBackfillOptions& options);

  ~SnapshotBackfillExecutor() override;

  PollResult PollNext(PollContext& cx) override;
  const ExecutorInfo& info() const override { return info_; }

  // Read between polls (tests, drivers).
  Phase phase() const { return phase_; }
  // E; Epoch(0) before start-up.
  Epoch snapshot_epoch() const { return snapshot_epoch_; }
  uint64_t snapshot_rows() const { return snapshot_rows_; }
  // Bytes of the log not yet replayed, and their peak in this executor's
  // life (counting from what it loaded).
  uint64_t log_bytes() const { return log_bytes_; }
  uint64_t peak_log_bytes() const { return peak_log_bytes_; }
  // True once the barrier after the join was emitted.
  bool is_finished() const { return finished_; }

 private:
  enum class Step { kProgress, kPending };
  enum class Stage { kAwaitFirstBarrier, kInit, kRunning, kEnded };

  SnapshotBackfillExecutor(StateStore& store, const TableCatalog& upstream,
                           const VnodeBitmap& vnodes, BoxedExecutor input,
                           std::unique_ptr<StateTable> log_table,
                           std::unique_ptr<StateTable> meta_table,
                           std::unique_ptr<StateTable> decoder,
                           ProgressReporter* reporter, BackfillMetrics* metrics,
                           const SnapshotBackfillOptions& options,
                           OutputMapping output_mapping, ExecutorInfo info,
                           std::vector<DataType> s2_types);

  Step PollStartup(PollContext& cx);
  Step PollRunning(PollContext& cx);
  // Whether the snapshot or the replay can produce a chunk now; sets a
  // wake-up when only the rate limiter stands in the way.
  bool CanWork(PollContext& cx);
  // One snapshot chunk (permits taken) or one replay chunk.
  absl::Status Work();
  absl::Status LoadProgress(EpochPair first);
  // The name of this actor's epoch pin in the store (StateStore::PinEpoch).
  std::string PinOwner() const;
  absl::Status ReadSnapshotChunk();
  absl::Status ReplayChunk();
  absl::Status AppendToLog(StreamChunk chunk);
  absl::Status HandleBarrier(Barrier barrier);
  absl::Status WriteProgress();
  uint32_t ChunkCapacity() const;
  Step Fail(const absl::Status& status);
  // No more messages after the queued ones; the reads closed.
  void EndStream();
  std::string Context() const;

  StateStore& store_;
  const TableCatalog upstream_;
  const VnodeBitmap vnodes_bitmap_;
  // The owned vnodes, ascending.
  std::vector<VirtualNode> vnodes_;
  BoxedExecutor input_;
  std::unique_ptr<StateTable> log_table_;
  std::unique_ptr<StateTable> meta_table_;
  // An instance of the upstream table used only to decode stored rows
  // (never initialised, never written).
  std::unique_ptr<StateTable> decoder_;
  ProgressReporter* reporter_;
  const BackfillMetrics metrics_;
  const SnapshotBackfillOptions options_;
  const OutputMapping output_mapping_;
  const ExecutorInfo info_;
  const std::vector<DataType> s2_types_;
  BackfillControls controls_;

  Stage stage_ = Stage::kAwaitFirstBarrier;
  // The first barrier's epoch (set when it arrived).
  EpochPair first_epoch_;
  absl::Status final_status_;

  Phase phase_ = Phase::kSnapshot;
  bool finished_ = false;
  // The phase as last written (the join's barrier reports finish).
  Phase persisted_phase_ = Phase::kSnapshot;
  Epoch snapshot_epoch_;
  // The snapshot position: vnodes_[snapshot_index_] is being read, after
  // snapshot_pk_ (none: from its first row). index == size: done.
  size_t snapshot_index_ = 0;
  std::optional<std::string> snapshot_pk_;
  std::unique_ptr<StateStoreIterator> scan_;
  Epoch replayed_epoch_;
  // The (epoch, seq) of the last log row replayed since start-up.
  std::optional<std::pair<int64_t, int64_t>> replayed_key_;
  uint64_t snapshot_rows_ = 0;
  uint64_t log_bytes_ = 0;
  uint64_t peak_log_bytes_ = 0;
  // The next log row's seq in the current epoch.
  int64_t next_seq_ = 0;
  // Whether the next step gives the snapshot / replay a turn before the
  // input (alternation, so neither starves).
  bool work_turn_ = false;
  // Set by CanWork: it said no because the rate limiter had no permits.
  bool waiting_for_permits_ = false;
  uint64_t snapshot_rows_this_epoch_ = 0;
  uint64_t upstream_rows_this_epoch_ = 0;

  BackfillOutput output_;
  CommitWaiter commit_waiter_;
};

// One actor's saved progress, a row of SnapshotMetaCatalog decoded: what
// the executor resumes from and what `backfill inspect` shows.
struct SnapshotActorProgress {
  ActorId actor_id = 0;
  // The actor's vnodes (VnodeBitmap::Serialize).
  std::string vnodes;
  Epoch snapshot_epoch;
  SnapshotBackfillExecutor::Phase phase =
      SnapshotBackfillExecutor::Phase::kSnapshot;
  // The index, among the actor's vnodes in ascending order, of the vnode
  // being read (their count once all are read), and the pk bytes of its last
  // row sent (none yet: nullopt).
  size_t vnode_index = 0;
  std::optional<std::string> pk;
  Epoch replayed_epoch;
  uint64_t snapshot_rows = 0;
  uint64_t log_bytes = 0;
};

// Errors: DataLoss naming the row's actor (when it decodes) for a row of
// another width, a column of another type, or a value out of range (a
// negative count or index, an unknown phase).
absl::StatusOr<SnapshotActorProgress> DecodeSnapshotProgressRow(const Row& row);

// "snapshot", "replay", "joined".
const char* SnapshotPhaseName(SnapshotBackfillExecutor::Phase phase);

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_SNAPSHOT_BACKFILL_EXECUTOR_H_
