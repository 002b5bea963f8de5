// ArrangementBackfillExecutor: feeds a new materialized view with every row an
// upstream table has now plus every change made to it from now on, without
// pausing the upstream, sending no row twice and missing none (CONTRACT §4-§8).
//
// clang-format off
//   BACKFILL_ASSIGN_OR_RETURN(BoxedExecutor backfill,
//       ArrangementBackfillExecutor::Create(std::move(replicated_table),
//           std::move(upstream), std::move(progress_table), reporter,
//           metrics, options));
//   PollResult result = backfill->PollNext(cx);   // see executor/executor.h
// clang-format on
//
// Per vnode it reads the upstream's history in pk order through the
// replicated state table, remembers how far it got (`current_pos`), and at
// each barrier forwards only the upstream changes whose key it has already
// sent; progress is persisted per vnode at every barrier in the progress
// table. The lifecycle (start-up, epoch loop, end of snapshot, finish, steady
// state) is described in executor/README.md; each stage is a named method
// below.
//
// Schemas: upstream chunks and snapshot rows are in S2 (the replicated
// table's output columns); the executor emits S3 = `output_indices` into S2.
//
// Thread-safety: an Executor (one task at a time). The tables' StateStore,
// the reporter and the metrics' Registry must outlive the executor.
#ifndef EXECUTOR_BACKFILL_ARRANGEMENT_BACKFILL_EXECUTOR_H_
#define EXECUTOR_BACKFILL_ARRANGEMENT_BACKFILL_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "executor/backfill/backfill_controls.h"
#include "executor/backfill/backfill_output.h"
#include "executor/backfill/backfill_state.h"
#include "executor/backfill/commit_waiter.h"
#include "executor/backfill/output_mapping.h"
#include "executor/backfill/progress_catalog.h"
#include "executor/backfill/progress_reporter.h"
#include "executor/backfill/snapshot_chunk_reader.h"
#include "executor/barrier.h"
#include "executor/executor.h"
#include "executor/message.h"
#include "executor/poll.h"
#include "metrics/backfill_metrics.h"
#include "ratelimit/rate_limit.h"
#include "storage/replicated_state_table.h"
#include "storage/state_table.h"
#include "storage/table_catalog.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

struct ArrangementBackfillOptions {
  ActorId actor_id = 0;
  FragmentId fragment_id = 0;
  // S3: indices into S2 (the replicated table's output columns) of the
  // emitted columns. Required; may drop pk columns.
  std::vector<int> output_indices;
  // Rows per snapshot chunk; default 256 (RisingWave's stream_chunk_size).
  // The builder capacity is max(2, min(rate_limit, chunk_size)). >= 1.
  uint32_t chunk_size = 256;
  // Snapshot rows per second of this actor; default Disabled. Changes online
  // through Throttle mutations for `fragment_id`.
  RateLimit rate_limit = RateLimit::Disabled();
  // The clock of the rate limiter; default Clock::Real(). A driver on
  // simulated time passes its clock (the same as its PollContext's).
  Clock* clock = nullptr;
  // Optional back-pressure from downstream: the executor reads snapshot rows
  // only while this returns true (when false it has registered the
  // context's waker for when there is room). Upstream messages are consumed
  // regardless, so a slow downstream throttles the snapshot, not the
  // upstream. Default: always ready.
  std::function<bool(PollContext&)> output_ready;
  // The byte budget of the epoch's upstream buffer (CONTRACT §10), measured
  // as StreamChunk::EstimatedBytes of the compacted chunks; default 16 MiB,
  // any value (0 = never buffer). When appending a chunk would take the
  // buffer above it, the snapshot position is frozen for the rest of the
  // epoch (a minimum-progress read if the epoch read nothing yet, then the
  // builders are flushed and no snapshot row is read until the barrier) and
  // the buffered chunks and every later chunk of the epoch are marked
  // against the frozen position, forwarded and replicated at once. The
  // replicated table's own epoch buffer is not counted.
  size_t upstream_buffer_budget_bytes = size_t{16} << 20;
  // The most vnode scans (one store seek each) the snapshot side opens in
  // one step, i.e. between two looks at upstream, so that an arriving
  // barrier never waits behind thousands of them (empty vnodes of a table
  // with many vnodes); default 16, >= 1. Only one scan is open at a time
  // (SnapshotChunkReader).
  uint32_t max_vnode_scans_per_step = 16;
};

class ArrangementBackfillExecutor final : public Executor {
 public:
  // An executor that backfills from `upstream_table` (a replicated table of
  // the upstream, owning the actor's vnodes) and forwards `upstream` (the
  // upstream's change stream), persisting its progress in `progress_table`.
  // Errors: InvalidArgument naming the field when an output index is out of
  // range, the chunk size is 0, the progress table fails
  // ValidateProgressCatalog (executor/backfill/progress_catalog.h), or the
  // two tables own different vnodes.
  // `reporter` and `metrics` may be null (not reported).
  static absl::StatusOr<std::unique_ptr<ArrangementBackfillExecutor>> Create(
      std::unique_ptr<ReplicatedStateTable> upstream_table,
      BoxedExecutor upstream, std::unique_ptr<StateTable> progress_table,
      ProgressReporter* reporter, BackfillMetrics* metrics,
      const ArrangementBackfillOptions& options);

  ~ArrangementBackfillExecutor() override;

  PollResult PollNext(PollContext& cx) override;
  const ExecutorInfo& info() const override { return info_; }

  // Observability for drivers and tests (read between polls).
  // The per-vnode progress (absent before start-up finished).
  const BackfillState* backfill_state() const {
    return state_.has_value() ? &*state_ : nullptr;
  }
  // True once the finish barrier was emitted.
  bool is_finished() const {
    return phase_ == Phase::kSteady || phase_ == Phase::kEnded;
  }
  RateLimit rate_limit() const { return controls_.limiter().limit(); }
  // options.upstream_buffer_budget_bytes, as built.
  size_t upstream_buffer_budget_bytes() const {
    return options_.upstream_buffer_budget_bytes;
  }
  // The most upstream change data (StreamChunk::EstimatedBytes) buffered in
  // one epoch so far: what the backfill holds in memory for the upstream.
  size_t peak_upstream_buffer_bytes() const {
    return peak_upstream_buffer_bytes_;
  }
  // Epochs in which the upstream buffer reached its budget and the snapshot
  // position was frozen (options.upstream_buffer_budget_bytes).
  uint64_t num_buffer_freezes() const { return num_buffer_freezes_; }
  // The snapshot side's open scans and builders (now and at their peak) and
  // the vnode scans opened so far (zeros before the epoch loop; the last
  // values after the end of the snapshot).
  SnapshotChunkReader::Stats snapshot_stats() const {
    return snapshot_.has_value() ? snapshot_->stats() : last_snapshot_stats_;
  }

 private:
  // The outcome of one internal step: kProgress = state changed or output
  // queued (PollNext loops); kPending = a wake-up is arranged.
  enum class Step { kProgress, kPending };

  enum class Phase {
    kAwaitFirstBarrier,  // start-up step 1
    kInitProgressTable,  // waits for committed >= first.prev, loads progress
    kInitUpstreamTable,  // waits for committed >= first.prev
    kBackfill,           // the epoch loop
    kFinishing,          // snapshot done; forward until the next barrier
    kSteady,             // forward everything
    kEnded,              // End or Error returned
  };

  ArrangementBackfillExecutor(
      std::unique_ptr<ReplicatedStateTable> upstream_table,
      BoxedExecutor upstream, std::unique_ptr<StateTable> progress_table,
      ProgressReporter* reporter, BackfillMetrics* metrics,
      const ArrangementBackfillOptions& options, OutputMapping output_mapping,
      ExecutorInfo info);

  // The lifecycle stages (executor/README.md).
  Step PollStartup(PollContext& cx);
  // One step of the epoch loop: upstream first, else snapshot rows.
  Step PollBackfill(PollContext& cx);
  // The forward-only phases: upstream messages mapped to S3. Finishing:
  // the next barrier is the finish barrier (FinishBarrier). Steady: each
  // barrier commits the progress table.
  Step PollForward(PollContext& cx);
  // A chunk of snapshot rows (full or flushed): all-Insert, advances the
  // vnode's position to its last row, queued for output in S3.
  absl::Status HandleSnapshotChunk(VnodeChunk chunk);
  // A Read's chunk (if any), then its finished vnodes marked Completed.
  absl::Status HandleSnapshotRead(SnapshotRead& read);
  // Closes the snapshot reader and handles what the builders hold.
  absl::Status FlushSnapshot();
  // Barrier processing, CONTRACT §4.5 (a)-(h), for a barrier in the loop.
  absl::Status ProcessBarrier(Barrier barrier);
  // End of snapshot: flush, forward the buffered changes unmarked.
  absl::Status EndOfSnapshot();
  // Minimum progress (CONTRACT §4.4): up to one chunk if this epoch read no
  // snapshot row yet, the reader is not paused and permits are available.
  // Sets *exhausted (after EndOfSnapshot) if the snapshot ended.
  absl::Status MinimumProgress(bool* exhausted);
  // Buffers an upstream chunk, or (frozen, or the budget would be exceeded)
  // forwards it at once (CONTRACT §10). A buffered chunk's rows that the
  // positions have already passed are forwarded at once (Release).
  absl::Status HandleUpstreamChunk(StreamChunk chunk);
  // An upstream chunk buffered until the barrier, which writes it whole
  // into the replicated table. Its rows are forwarded as soon as the
  // positions pass them (a release) or marked at the barrier; `pending`
  // says which are neither forwarded nor dropped yet, `pending_ops` their
  // ops (a release that forwards one half of an update pair turns the other
  // half into a Delete or Insert, as marking does); `vnodes` each row's
  // table vnode, hashed once at arrival.
  struct BufferedChunk {
    StreamChunk chunk;
    std::vector<VirtualNode> vnodes;
    std::vector<bool> pending;
    std::vector<Op> pending_ops;
    bool released_some = false;
  };
  // Forwards the pending rows of `buffered` that the rule of CONTRACT §5
  // keeps now. Correct mid-epoch because positions only advance within an
  // epoch: a row kept now is kept at the barrier, and its snapshot row was
  // emitted before. REQUIRES: every older buffered chunk was released
  // against the same positions (the order of each key's changes).
  absl::Status Release(BufferedChunk& buffered);
  // Releases every buffered chunk, oldest first, if a position moved since
  // the last time.
  absl::Status ReleaseBuffered();
  // `buffered`'s pending rows as a chunk (its own chunk if none was
  // released).
  static StreamChunk PendingRows(const BufferedChunk& buffered);
  // Marks every buffered chunk's pending rows against the current
  // positions, queues what stays visible and writes the chunks whole into
  // the replicated table (CONTRACT §4.5 (b)); empties the buffer.
  // REQUIRES: no snapshot reader is open.
  absl::Status ForwardBuffered();
  // Marks `chunk` against the current positions, queues what stays visible
  // and writes the whole chunk into the replicated table.
  // REQUIRES: no snapshot reader is open.
  absl::Status ForwardMarked(const StreamChunk& chunk);
  // The two halves of ForwardMarked: the marked rows queued; the whole
  // chunk written into the replicated table (and counted as forwarded).
  absl::Status EmitMarked(const StreamChunk& chunk);
  absl::Status WriteReplica(const StreamChunk& chunk);
  // The finish barrier: every vnode Completed, persisted, committed,
  // reported; then the barrier is queued.
  absl::Status FinishBarrier(Barrier barrier);
  absl::Status PersistState(EpochPair epoch);
  // Applies the barrier's mutation to the controls; a new rate limit
  // resizes the snapshot side's builders.
  void ApplyMutation(const Barrier& barrier);
  absl::Status LoadProgress();
  // Ends the stream with `status` (with context) / normally.
  Step Fail(const absl::Status& status);
  Step EndStream();
  std::string Context() const;

  // Inputs and tables.
  std::unique_ptr<ReplicatedStateTable> upstream_table_;
  BoxedExecutor upstream_;
  std::unique_ptr<StateTable> progress_table_;
  ProgressReporter* reporter_;
  // A copy of the caller's handles, or detached ones (BackfillMetrics{})
  // when the executor was built without metrics.
  const BackfillMetrics metrics_;
  const ArrangementBackfillOptions options_;
  const OutputMapping output_mapping_;
  const ExecutorInfo info_;
  std::vector<OrderType> pk_orders_;
  std::vector<DataType> pk_types_;
  // The pauses and the rate limiter, as barriers set them.
  BackfillControls controls_;

  // Lifecycle.
  Phase phase_ = Phase::kAwaitFirstBarrier;
  // The first barrier's epoch (set when it arrived).
  EpochPair first_epoch_;
  absl::Status final_status_;

  // The epoch loop.
  std::optional<BackfillState> state_;
  // The snapshot side (reader, per-vnode builders, permits): from the start
  // of the epoch loop to the end of the snapshot.
  std::optional<SnapshotChunkReader> snapshot_;
  std::vector<BufferedChunk> upstream_buffer_;
  // Bumped whenever a position moves; every pending row was last checked
  // against the positions of released_version_.
  uint64_t progress_version_ = 0;
  uint64_t released_version_ = 0;
  size_t upstream_buffer_rows_ = 0;
  size_t upstream_buffer_bytes_ = 0;
  size_t peak_upstream_buffer_bytes_ = 0;
  // The upstream buffer reached its budget this epoch: no snapshot reads
  // until the barrier, upstream chunks are forwarded at once.
  bool frozen_ = false;
  uint64_t num_buffer_freezes_ = 0;
  // Upstream rows forwarded this epoch (marked or not).
  uint64_t upstream_rows_this_epoch_ = 0;
  SnapshotChunkReader::Stats last_snapshot_stats_;
  uint64_t num_vnodes_completed_ = 0;
  uint64_t snapshot_rows_this_epoch_ = 0;
  uint64_t total_snapshot_rows_ = 0;

  // Messages ready to emit, in order, and the barriers' arrival times.
  BackfillOutput output_;

  // Start-up: waits for the committed epoch before each InitEpoch.
  CommitWaiter commit_waiter_;
};

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_ARRANGEMENT_BACKFILL_EXECUTOR_H_
