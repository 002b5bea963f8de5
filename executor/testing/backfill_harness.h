// BackfillHarness: one ArrangementBackfillExecutor driven by a test as the
// runtime would drive it, with an oracle.
//
//   BACKFILL_ASSERT_OK_AND_ASSIGN(auto h, BackfillHarness::Create(store, clock, options));
//   BACKFILL_ASSERT_OK(h->Insert(row));                  // initial upstream rows
//   BACKFILL_ASSERT_OK(h->StartBackfill());              // first barrier
//   BACKFILL_ASSERT_OK(h->Insert(other)); h->PushPending(3);
//   BACKFILL_ASSERT_OK(h->Barrier(BarrierKind::kCheckpoint));  // checks CONTRACT §5
//
// The harness owns the upstream table (a consistent StateTable written by
// Insert/Delete/Update, like the upstream materialize actor), a model of it
// (std::map), the backfill's scripted input (the dispatcher's output for the
// actor's vnodes: S2 rows; an update goes through the runtime's
// HashDispatcher, executor/runtime/hash_dispatcher.h, so a U-/U+ pair whose
// halves part between this actor's vnodes and others' becomes a Delete or an
// Insert exactly as in the runtime), and a model of the downstream view (a
// multiset of S3 rows built from everything the executor emits).
//
// Barrier() seals the upstream epoch, sends the barrier, polls the executor
// until it emits that barrier (advancing the simulated clock only when the
// executor waits for time), applies the output to the view, checkpoints the
// store on checkpoint barriers, and checks THE INVARIANT of CONTRACT §5: the view
// equals the upstream as of barrier.epoch.prev restricted to Completed vnodes
// and to pk <= current_pos in InProgress vnodes (all owned rows after
// finish). A divergence is a FailedPrecondition naming the epoch, vnode, key
// and both rows; a duplicate insert or a delete of a missing row in the view
// is one too.
#ifndef EXECUTOR_TESTING_BACKFILL_HARNESS_H_
#define EXECUTOR_TESTING_BACKFILL_HARNESS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "executor/backfill/arrangement_backfill_executor.h"
#include "executor/backfill/progress_reporter.h"
#include "executor/barrier.h"
#include "executor/message.h"
#include "executor/stream_chunk.h"
#include "executor/testing/scripted_executor.h"
#include "metrics/backfill_metrics.h"
#include "metrics/registry.h"
#include "serde/positional_codec.h"
#include "serde/vnode_bitmap.h"
#include "storage/state_store.h"
#include "storage/state_table.h"
#include "storage/table_catalog.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {
namespace testing {

struct HarnessOptions {
  // S1.
  TableCatalog upstream;
  // S2: column ids of `upstream`, must include the pk.
  std::vector<int32_t> s2_column_ids;
  // S3: indices into S2.
  std::vector<int> output_indices;
  // The backfill actor's vnodes; default (empty bitmap) = all vnodes.
  std::optional<VnodeBitmap> owned;
  ArrangementBackfillOptions backfill;
  TableId progress_table_id = 1000;
  // Simulated time per epoch (lets rate-limit permits accrue).
  absl::Duration barrier_interval = absl::Milliseconds(100);
  // When set, builds the executor (at creation and at every Restart) instead
  // of ArrangementBackfillExecutor::Create over the fields above, e.g. from a
  // plan node; `upstream`, `s2_column_ids`, `backfill.output_indices`,
  // `backfill.actor_id` and `owned` must then describe what it builds (the
  // oracle uses them). `input` is the backfill's scripted upstream.
  std::function<absl::StatusOr<std::unique_ptr<ArrangementBackfillExecutor>>(
      BoxedExecutor input, ProgressReporter* reporter,
      BackfillMetrics* metrics, Clock* clock)>
      make_executor;
};

class BackfillHarness {
 public:
  static absl::StatusOr<std::unique_ptr<BackfillHarness>> Create(
      StateStore& store, SimulatedClock& clock, HarnessOptions options);
  ~BackfillHarness();

  // Upstream DML in the current epoch (S1 rows). Delete/Update take the
  // current row. Routed to the backfill input if its vnode is owned.
  absl::Status Insert(const Row& row);
  absl::Status Delete(const Row& row);
  absl::Status Update(const Row& old_row, const Row& new_row);
  // Sends the DML buffered so far as one chunk (no-op if none).
  void FlushChunk();
  // `count` points where the upstream has nothing ready (snapshot reads).
  void PushPending(int count);
  void PushWatermark(Watermark watermark);

  // Commits the initial rows (checkpoint) and sends the backfill's first
  // barrier with `mutation`; returns after the executor emitted it.
  absl::Status StartBackfill(std::optional<Mutation> mutation = std::nullopt);
  // One barrier; see the file comment. Before StartBackfill it only commits
  // the upstream.
  absl::Status Barrier(BarrierKind kind = BarrierKind::kCheckpoint,
                       std::optional<Mutation> mutation = std::nullopt);

  // A crash: drops the executor and every table instance (their uncommitted
  // data is lost), and reverts the upstream and view models to the last
  // checkpoint.
  void Crash();
  // Recovery after Crash(): the upstream and a new backfill actor owning
  // `owned` start again from the last checkpoint with an Initial barrier
  // (carrying `mutation`); the actor loads each vnode's persisted progress.
  absl::Status Restart(std::optional<VnodeBitmap> owned,
                       std::optional<Mutation> mutation = std::nullopt);

  bool finished() const { return executor_ != nullptr && executor_->is_finished(); }
  Epoch epoch() const { return Epoch(epoch_); }
  ArrangementBackfillExecutor& executor() { return *executor_; }
  const std::map<std::string, Row>& upstream_rows() const { return model_; }
  // Every message the executor emitted during the last Barrier/StartBackfill.
  const std::vector<Message>& last_output() const { return last_output_; }
  // Total rows in the view model.
  size_t view_size() const;
  JobProgressTracker& tracker() { return *tracker_; }
  Registry& registry() { return registry_; }
  const StateTable& upstream_table() const { return *upstream_table_; }
  const std::vector<DataType>& s2_types() const { return s2_types_; }
  // S1 row -> S2 row.
  Row ToS2(const Row& s1) const;

 private:
  BackfillHarness(StateStore& store, SimulatedClock& clock,
                  HarnessOptions options);
  absl::Status Init();
  absl::Status CreateExecutor();
  void Route(Op op, const Row& s1);
  // Routes an update through the runtime's hash dispatcher into
  // pending_rows_ (only what this actor's vnodes receive).
  absl::Status DispatchPair(const Row& old_row, const Row& new_row);
  absl::Status Drive(Epoch until_curr);
  absl::Status ApplyOutput(const Message& message);
  absl::Status CheckInvariant(EpochPair epoch);
  std::string ViewKey(const Row& s3) const;

  StateStore& store_;
  SimulatedClock& clock_;
  HarnessOptions options_;
  std::vector<int> s2_to_s1_;
  std::vector<DataType> s2_types_;
  // Encodes an S3 row: the view model's key (rows, not primary keys).
  std::unique_ptr<PositionalCodec> view_codec_;
  std::unique_ptr<StateTable> upstream_table_;
  std::map<std::string, Row> model_;  // pk bytes -> S1 row
  std::vector<std::pair<Op, Row>> pending_rows_;  // S2
  ScriptedExecutor* input_ = nullptr;  // owned by the executor
  std::unique_ptr<ScriptedExecutor> input_before_start_;
  std::unique_ptr<JobProgressTracker> tracker_;
  std::unique_ptr<ProgressReporter> reporter_;
  Registry registry_;
  std::optional<BackfillMetrics> metrics_;
  std::unique_ptr<ArrangementBackfillExecutor> executor_;
  std::map<std::string, int> view_;  // encoded S3 row -> multiplicity
  // The models as of the last checkpoint (what a crash reverts to).
  std::map<std::string, Row> checkpoint_model_;
  std::map<std::string, int> checkpoint_view_;
  bool started_ = false;
  std::vector<Message> last_output_;
  uint64_t epoch_ = 1;
};

}  // namespace testing
}  // namespace backfill

#endif  // EXECUTOR_TESTING_BACKFILL_HARNESS_H_
