// InvariantOracle: the simulation's one oracle (CONTRACT §5 and the job
// state's contract, executor/runtime/job_state.h), independent of the code
// it checks. testonly.
//
//   InvariantOracle oracle(options);            // the job's options
//   store.AddCommitListener([&](Epoch) { oracle.OnCheckpoint(store); });
//   observer = [&](const JobProgress& p) { oracle.OnBarrier(p); };
//   ... each attempt: oracle.BeginAttempt();
//   oracle.OnJobFinished(store);
//   if (oracle.divergence()) ...
//
// At every checkpoint it reads what the store committed, raw (the store's
// committed iterators and the value codec; not the state tables, not the
// runtime's verifier): the source's offset, each vnode's saved progress and
// the view's rows in each vnode. Its expected view comes from its own model
// of the upstream (reference_model.h: the initial rows and the workload's
// operations up to the committed offset, its own vnode function and key
// order): for every vnode, the view holds exactly the model's rows of that
// vnode (projected to the view's columns) that are complete (finished
// vnode) or at or before the saved position (vnode in progress), none for a
// vnode without progress. After the job finished, every vnode is finished
// and the view equals the whole model. Rows are compared as stored
// (ReferenceRowsIdentical: floats bit for bit, INTERVALs field by field,
// inside LISTs, STRUCTs and MAPs too).
//
// A snapshot backfill (kSnapshot) saves no per-vnode progress: each actor
// saves one progress row (its vnodes, the snapshot epoch E, its phase, the
// snapshot position) and keeps a log of the changes after E that it has not
// replayed. The oracle models the table at E itself (its own model advanced
// to the source offset committed at E) and checks, per actor, on its
// vnodes: in the snapshot phase, the view holds exactly the table at E up
// to the position (the vnodes before the position's vnode in full, that
// vnode up to the position's key); before the join (snapshot and replay),
// applying the committed log to (snapshot phase) the table at E, or
// (replay phase) the view, gives the table now: so the view is the table at
// E with a prefix of the log applied, and the log holds exactly the rest;
// after the join, the view equals the table and the log is empty. Vnodes of
// no actor's saved row (nothing committed yet) hold no view row. After the
// job finished, every actor has joined.
//
// At every barrier it follows the job state from the timeline by its own
// reading of job_state.h's composition (every action of an epoch applies,
// in order), counting epochs since the view's creation itself (the first
// barrier of an attempt re-establishes the committed state and is not
// counted): while the job is paused, the backfill reads no snapshot row;
// under a job-wide rate limit of r rows/s, it reads at most what its actors'
// limiters can grant over the window (the rate limiter's contract,
// ratelimit/rate_limiter.h: per actor share x window + one burst). In
// adaptive mode (CONTRACT §11) the actors read at min(the controller's rate,
// the job-wide rate limit): the oracle does not model the controller, so
// there it checks the same bound, the timeline's rate limit being the
// controller's ceiling (and nothing when no limit is set); a restart that
// switches the mode on or off leaves that limit as it was. An online rescale
// needs nothing more: a new actor's limiter starts empty (no burst), and
// the progress reported at the rescale's barrier counts the old actors'
// rows.
//
// Thread-safety: one thread (the simulation's).
#ifndef TESTS_SIMULATION_INVARIANT_ORACLE_H_
#define TESTS_SIMULATION_INVARIANT_ORACLE_H_

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/runtime/job_result.h"
#include "executor/runtime/streaming_job_options.h"
#include "serde/value_row_codec.h"
#include "storage/state_store.h"
#include "tests/simulation/divergence.h"
#include "tests/simulation/reference_model.h"

namespace backfill {
namespace simulation {

class InvariantOracle {
 public:
  // REQUIRES: ValidateStreamingJobOptions(options).ok(); the upstream's
  // column types ReferenceTypeSupported. `options` must outlive the oracle.
  explicit InvariantOracle(const StreamingJobOptions& options);

  // A new attempt (graph) starts: the epoch count goes back to the last
  // committed one.
  void BeginAttempt();

  // A checkpoint committed on `store` (its commit listener; also for
  // ambiguous commits the job was told failed): checks CONTRACT §5 on what
  // it committed.
  void OnCheckpoint(StateStore& store);

  // A barrier other than an attempt's first was collected.
  void OnBarrier(const JobProgress& progress);

  // The job ended successfully: every vnode finished, view == model.
  void OnJobFinished(StateStore& store);

  // The first violation found, if any (checks stop after it).
  const std::optional<Divergence>& divergence() const { return divergence_; }
  void Report(Divergence divergence);

  uint64_t checkpoint_checks() const { return checkpoint_checks_; }
  uint64_t barrier_checks() const { return barrier_checks_; }
  // kSnapshot: attempts begun after a checkpoint whose least advanced actor
  // was in phase 0 (snapshot), 1 (replay) or 2 (joined).
  const std::array<uint64_t, 3>& snapshot_resumes() const {
    return snapshot_resumes_;
  }

 private:
  // Checks the committed state; `finished`: every vnode must be finished.
  void CheckCommitted(StateStore& store, bool finished);
  // The kSnapshot check (see above), after model_ reached the committed
  // source offset; `where` names the step in a divergence.
  void CheckSnapshotCommitted(StateStore& store, bool finished,
                              const std::string& where);
  // Whether the timeline has the job paused after epoch `count`'s actions,
  // and its job-wide rate limit then.
  bool PausedAfter(uint64_t count) const;
  RateLimit RateLimitAfter(uint64_t count) const;

  // A table the oracle reads, with its value codec (made once; an error
  // making it is reported by the first check that reads the table).
  struct ReadTable {
    explicit ReadTable(TableCatalog table);
    TableCatalog catalog;
    absl::StatusOr<std::unique_ptr<ValueRowCodec>> codec;
  };
  // The source's offset committed at `at` (none: the last commit).
  absl::StatusOr<uint64_t> SourceOffset(StateStore& store,
                                        std::optional<Epoch> at) const;
  // The committed rows of `table` in `vnode`, decoded from the stored
  // values (every table the oracle reads keeps all its columns in the value
  // except possibly pk columns it does not need: those read back as NULL);
  // `at`: a historical read at that epoch instead of the committed one.
  static absl::StatusOr<std::vector<Row>> CommittedRows(
      StateStore& store, const ReadTable& table, VirtualNode vnode,
      std::optional<Epoch> at = std::nullopt);

  const StreamingJobOptions& options_;
  const TableCatalog view_catalog_;
  const ReadTable offset_table_;
  const ReadTable progress_table_;
  const ReadTable view_table_;
  // kSnapshot: the log and progress tables.
  const ReadTable snapshot_log_table_;
  const ReadTable snapshot_meta_table_;
  // kSnapshot: the model at each snapshot epoch seen (by epoch).
  std::map<uint64_t, std::unique_ptr<UpstreamModel>> models_at_;
  // S1 indices of the view's columns.
  std::vector<int> view_columns_;
  UpstreamModel model_;
  std::optional<Divergence> divergence_;
  uint64_t checkpoint_checks_ = 0;
  uint64_t barrier_checks_ = 0;
  std::array<uint64_t, 3> snapshot_resumes_ = {0, 0, 0};
  // kSnapshot: the least advanced actor's phase at the last check.
  std::optional<int> committed_snapshot_phase_;

  // Epochs since the view's creation: of the last barrier seen, and of the
  // last committed one.
  uint64_t epoch_count_ = 0;
  uint64_t committed_count_ = 0;
  bool in_attempt_ = false;
  // Snapshot rows at the last barrier of this attempt (none before its
  // first counted barrier).
  std::optional<uint64_t> last_rows_;
  // The job's seconds at the last two barriers of this attempt.
  std::optional<double> last_seconds_;
  std::optional<double> second_last_seconds_;
};

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_INVARIANT_ORACLE_H_
