// NoShuffleBackfillExecutor: the arrangement backfill's predecessor (issue
// 20). It sits beside one upstream writer (one-to-one, the same vnodes),
// reads that writer's own table (not a replica) and keeps ONE position for
// all its vnodes: the snapshot is read as one pk-ordered stream merged across
// the vnodes, so an actor can never be split or merged (rescaled).
//
// clang-format off
//   // `upstream` writes `upstream_table` (e.g. the upstream's materialize)
//   // and passes every message on, in the same actor.
//   BACKFILL_ASSIGN_OR_RETURN(auto backfill,
//       NoShuffleBackfillExecutor::Create(upstream_table, std::move(upstream),
//           std::move(progress_table), reporter, metrics, options));
// clang-format on
//
// Co-location. RisingWave schedules this backfill on the upstream's worker so
// that it can read the upstream's uncommitted writes. Our store shows a local
// instance's uncommitted writes to that instance only (CONTRACT §3), so here
// the backfill runs in the writer's actor, after it, and reads through the
// writer's table instance: the table always holds every change the backfill
// has received, and nothing it has not.
//
// The protocol. Upstream comes first. A change chunk is marked at once
// against the current position and forwarded (a row stays visible iff its
// pk <= position, in pk order; update pairs split by the position are
// rewritten as CONTRACT §5 says): the rows at or before the position are in
// the view and must follow, the rows after it will be read later with the
// change already applied. So nothing is buffered. When upstream has nothing
// ready (and downstream has room, and the backfill is not paused), it reads
// up to one chunk of snapshot rows after the position, merged across its
// vnodes in pk order (one rate-limiter permit batch per chunk), and moves the
// position to the last row. The open scans are dropped whenever a change
// arrives (they no longer show the table) and at barriers. When the merged
// scan ends, every row has been sent as the table now is: every later change
// is forwarded unmarked, and the next barrier is the finish barrier.
//
// At a barrier: minimum progress (one chunk if the epoch read no snapshot
// row and permits are available now, CONTRACT §4.4), the progress report,
// the position written into every owned vnode's progress row if it moved
// (BackfillProgressCatalog: [vnode | position..., finished, rows]; the
// actor's row count in the row of its first vnode, 0 in the others, so sums
// over vnodes stay right), the progress table committed, the mutation
// applied (Pause, Resume, StartFragmentBackfill, Throttle as the arrangement
// backfill takes them), the barrier emitted. Per vnode the saved state is
// exactly CONTRACT §6's, so §5's invariant reads the same: each vnode's view
// rows are the upstream's rows at or before the (shared) position.
//
// Recovery: on start-up the owned vnodes' rows must tell one story: all
// absent (fresh), or all with the same position and finished flag. Anything
// else means the progress was written by actors with another vnode split,
// i.e. at another parallelism: FailedPrecondition (a no-shuffle backfill
// cannot be rescaled). A row that does not decode is DataLoss.
//
// Schemas: upstream chunks and the table's rows are in S1 (the upstream
// table's columns); the executor emits S3 = `output_indices` into S1.
//
// Thread-safety: an Executor (one task at a time). The upstream table must
// outlive the executor (it is owned by `upstream`, which the executor owns);
// the store, the reporter and the metrics' Registry must too.
#ifndef EXECUTOR_BACKFILL_NO_SHUFFLE_BACKFILL_EXECUTOR_H_
#define EXECUTOR_BACKFILL_NO_SHUFFLE_BACKFILL_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/backfill/backfill_controls.h"
#include "executor/backfill/backfill_output.h"
#include "executor/backfill/backfill_state.h"
#include "executor/backfill/commit_waiter.h"
#include "executor/backfill/output_mapping.h"
#include "executor/backfill/progress_reporter.h"
#include "executor/barrier.h"
#include "executor/executor.h"
#include "metrics/backfill_metrics.h"
#include "ratelimit/rate_limit.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

struct NoShuffleBackfillOptions {
  ActorId actor_id = 0;
  FragmentId fragment_id = 0;
  // S3: indices into S1 (the upstream table's columns) of the emitted
  // columns. Required; may drop pk columns.
  std::vector<int> output_indices;
  // Rows per snapshot chunk; default 256. The chunk capacity is
  // max(2, min(rate_limit, chunk_size)). >= 1.
  uint32_t chunk_size = 256;
  // Snapshot rows per second of this actor; default Disabled. Changes online
  // through Throttle mutations (per actor, else per fragment).
  RateLimit rate_limit = RateLimit::Disabled();
  // The rate limiter's clock; default Clock::Real().
  Clock* clock = nullptr;
  // Optional downstream back-pressure, as ArrangementBackfillOptions::
  // output_ready: snapshot rows are read only while it returns true.
  std::function<bool(PollContext&)> output_ready;
};

class NoShuffleBackfillExecutor final : public Executor {
 public:
  // Errors: InvalidArgument naming the field when an output index is out of
  // range, the chunk size is 0, the progress table fails
  // ValidateProgressCatalog, or the two tables own different vnodes.
  // `upstream_table` is read only, between polls of `upstream`, which must
  // write every change into it before passing the change on.
  static absl::StatusOr<std::unique_ptr<NoShuffleBackfillExecutor>> Create(
      StateTable& upstream_table, BoxedExecutor upstream,
      std::unique_ptr<StateTable> progress_table, ProgressReporter* reporter,
      BackfillMetrics* metrics, const NoShuffleBackfillOptions& options);

  ~NoShuffleBackfillExecutor() override;

  PollResult PollNext(PollContext& cx) override;
  const ExecutorInfo& info() const override { return info_; }

  // The shared position (pk columns in pk order); none before the first
  // snapshot row. Read between polls.
  const std::optional<Row>& position() const { return position_; }
  // Snapshot rows sent, before and after restarts.
  uint64_t snapshot_rows() const { return total_rows_; }
  // True once the finish barrier was emitted.
  bool is_finished() const {
    return phase_ == Phase::kSteady || phase_ == Phase::kEnded;
  }

 private:
  enum class Step { kProgress, kPending };
  enum class Phase {
    kAwaitFirstBarrier,
    kInitProgressTable,  // waits for committed >= first.prev, loads progress
    kBackfill,
    kFinishing,  // snapshot done; forward until the next (finish) barrier
    kSteady,
    kEnded,
  };
  // One vnode's open scan in the merge.
  struct Cursor;

  NoShuffleBackfillExecutor(StateTable& upstream_table, BoxedExecutor upstream,
                            std::unique_ptr<StateTable> progress_table,
                            ProgressReporter* reporter,
                            BackfillMetrics* metrics,
                            const NoShuffleBackfillOptions& options,
                            OutputMapping output_mapping, ExecutorInfo info);

  Step PollStartup(PollContext& cx);
  Step PollBackfill(PollContext& cx);
  Step PollForward(PollContext& cx);
  absl::Status LoadProgress();
  // Reads up to one chunk after the position (permits already granted).
  // Sets *exhausted when the merged scan has no row left.
  absl::Status ReadChunk(bool* exhausted);
  absl::Status OpenScans();
  void CloseScans();
  // Opens `vnode`'s scan after the position (none if it has no row left).
  absl::StatusOr<std::unique_ptr<Cursor>> OpenScan(VirtualNode vnode);
  // The open scans of the `changed` vnodes (an upstream chunk changed rows
  // of theirs after the position) no longer show the table; they are
  // opened again (a scan of another vnode, or of one that only changed rows
  // at or before the position, still shows every row it has left to read).
  absl::Status RefreshScans(const absl::flat_hash_set<VirtualNode>& changed);
  // The writer applied `chunk`: refreshes the scans it made stale, marks it
  // against the position and queues what stays visible.
  absl::Status HandleUpstreamChunk(StreamChunk chunk);
  absl::Status MinimumProgress(bool* exhausted);
  absl::Status ProcessBarrier(Barrier barrier);
  absl::Status FinishBarrier(Barrier barrier);
  // Moves every owned vnode's progress to the position if it moved (all
  // Completed when `finished`), writes what changed, commits the progress
  // table and counts the epoch's rows in the metrics.
  absl::Status PersistState(EpochPair epoch, bool finished);
  uint32_t ChunkCapacity() const;
  Step Fail(const absl::Status& status);
  std::string Context() const;

  StateTable& upstream_table_;
  BoxedExecutor upstream_;
  std::unique_ptr<StateTable> progress_table_;
  ProgressReporter* reporter_;
  const BackfillMetrics metrics_;
  const NoShuffleBackfillOptions options_;
  const OutputMapping output_mapping_;
  const ExecutorInfo info_;
  std::vector<DataType> pk_types_;
  std::vector<DataType> s1_types_;
  // The pauses and the rate limiter, as barriers set them.
  BackfillControls controls_;

  Phase phase_ = Phase::kAwaitFirstBarrier;
  // The first barrier's epoch (set when it arrived).
  EpochPair first_epoch_;
  absl::Status final_status_;

  // The owned vnodes' progress as persisted: every vnode at the shared
  // position (absent before start-up finished).
  std::optional<BackfillState> state_;
  // The shared position; none before the first snapshot row.
  std::optional<Row> position_;
  uint64_t total_rows_ = 0;
  // Snapshot and upstream rows sent since the last barrier.
  uint64_t rows_this_epoch_ = 0;
  uint64_t upstream_rows_this_epoch_ = 0;

  // The merge: one open scan per owned vnode with rows left, a min-heap on
  // the current pk bytes. Empty = closed. Each upstream chunk opens again
  // only the scans of the vnodes it changed after the position.
  std::vector<std::unique_ptr<Cursor>> cursors_;
  bool scans_open_ = false;

  // Messages ready to emit, in order, and the barriers' arrival times.
  BackfillOutput output_;
  CommitWaiter commit_waiter_;
};

}  // namespace backfill

#endif  // EXECUTOR_BACKFILL_NO_SHUFFLE_BACKFILL_EXECUTOR_H_
