#include "tools/live_progress.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/status/statusor.h"
#include "ratelimit/rate_limit.h"
#include "tools/inspect.h"

namespace backfill {

LiveProgress::LiveProgress(std::ostream* out, ProgressDisplayOptions display,
                           LiveProgressOptions options, Clock& clock)
    : options_(std::move(options)),
      clock_(clock),
      start_(clock.Now()),
      snapshot_(SnapshotProgressOptions{.expected_total_rows =
                                            options_.initial_rows}) {
  if (out != nullptr) display_.emplace(*out, display);
}

LiveProgress::~LiveProgress() { Finish(); }

double LiveProgress::Elapsed() const {
  return absl::ToDoubleSeconds(clock_.Now() - start_);
}

void LiveProgress::Start() {
  {
    MutexLock lock(&mu_);
    if (!display_.has_value() || stop_) return;
  }
  ticker_ = std::thread([this] {
    absl::Time next = clock_.Now();
    while (true) {
      Tick();
      next += absl::Seconds(options_.tick_seconds);
      MutexLock lock(&mu_);
      clock_.WaitUntil(
          mu_, cv_,
          [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; }, next);
      if (stop_) return;
    }
  });
}

PhaseSample LiveProgress::PhaseAt(double seconds) const {
  PhaseSample sample;
  sample.seconds = seconds;
  if (phase_ == Phase::kRecovering) {
    sample.label = "recovering from the last checkpoint";
    return sample;
  }
  if (options_.resuming) {
    sample.label = "resuming from the last checkpoint";
    return sample;
  }
  const uint64_t written =
      options_.upstream_written_rows ? options_.upstream_written_rows() : 0;
  if (written == 0 || options_.initial_rows == 0) {
    sample.label = "starting";
  } else if (written < options_.initial_rows) {
    sample.label = "bulk load";
    sample.rows = written;
    sample.total_rows = options_.initial_rows;
  } else {
    sample.label = "creating the view";
  }
  return sample;
}

void LiveProgress::Tick() {
  const double now = Elapsed();
  MutexLock lock(&mu_);
  if (!display_.has_value()) return;
  if (phase_ != Phase::kBackfill) {
    display_->UpdatePhase(PhaseAt(now));
    last_shown_ = now;
    return;
  }
  // A barrier that takes longer than a tick: the last line again, its time
  // moving on.
  if (last_sample_.has_value() && now - last_shown_ >= options_.tick_seconds) {
    JobProgressSample sample = *last_sample_;
    sample.seconds = now;
    display_->Update(sample);
    last_shown_ = now;
  }
}

void LiveProgress::Refresh(const JobProgress& progress, StateStore& store,
                           VnodeSizeEstimator* sizes) {
  const JobDefinition& definition = options_.definition;
  const size_t vnode_count =
      static_cast<size_t>(std::max(definition.upstream.vnode_count, 0));
  if (options_.backfill_kind == BackfillKind::kSnapshot) {
    // The actors' figures, as SnapshotProgress takes them without sizes:
    // only the sum of the rows and the count of finished vnodes matter.
    std::vector<VnodeSnapshotProgress> vnodes(vnode_count);
    const size_t finished = std::min<size_t>(
        vnode_count,
        progress.backfill_done ? vnode_count : progress.vnodes_completed);
    for (size_t v = 0; v < finished; ++v) vnodes[v].finished = true;
    if (!vnodes.empty()) vnodes[0].rows_read = progress.snapshot_rows;
    MutexLock lock(&mu_);
    estimate_ = snapshot_.Update(progress.seconds, vnodes);
    return;
  }
  const Epoch committed = store.CommittedEpoch(definition.progress_table_id);
  bool take_sizes = false;
  {
    MutexLock lock(&mu_);
    // Every vnode finished: the share is 100 for good.
    if (vnode_count > 0 && estimate_.vnodes_finished == vnode_count) return;
    if (read_epoch_.has_value()) {
      if (committed == *read_epoch_) return;
      const bool due = progress.seconds - read_seconds_ >=
                       options_.min_read_interval_seconds;
      const bool news = progress.backfill_done ||
                        progress.vnodes_completed != read_vnodes_completed_;
      if (!due && !news) return;
    }
    take_sizes = !vnode_bytes_.has_value();
  }
  // The sizes to keep: taken once; without an estimator zeros for good; a
  // failed estimate is not kept, so the next read tries again.
  std::optional<std::vector<uint64_t>> bytes;
  if (take_sizes) {
    if (sizes == nullptr) {
      bytes.emplace(vnode_count, 0);
    } else {
      absl::StatusOr<std::vector<uint64_t>> taken =
          sizes->ApproximateVnodeBytes(definition.upstream.table_id,
                                       definition.upstream.vnode_count);
      if (taken.ok() && taken->size() == vnode_count) {
        bytes = *std::move(taken);
      }
    }
  }
  absl::StatusOr<std::vector<VnodeInspection>> vnodes =
      ReadCommittedVnodes(store, definition);
  MutexLock lock(&mu_);
  if (bytes.has_value()) vnode_bytes_ = std::move(bytes);
  read_epoch_ = committed;
  read_seconds_ = progress.seconds;
  read_vnodes_completed_ = progress.vnodes_completed;
  if (!vnodes.ok() || vnodes->size() != vnode_count) return;
  const std::vector<uint64_t> no_sizes;
  const std::vector<uint64_t>& weights =
      vnode_bytes_.has_value() ? *vnode_bytes_ : no_sizes;
  estimate_ = snapshot_.Update(progress.seconds,
                               SnapshotProgressInputs(*vnodes, weights));
}

SnapshotProgressEstimate LiveProgress::Observe(const JobProgress& progress,
                                               StateStore& store,
                                               VnodeSizeEstimator* sizes) {
  Refresh(progress, store, sizes);
  const double now = Elapsed();
  MutexLock lock(&mu_);
  phase_ = Phase::kBackfill;
  if (progress.upstream_ops < rate_ops_) {  // A replay after a recovery.
    rate_ops_ = progress.upstream_ops;
    rate_seconds_ = progress.seconds;
  }
  if (progress.seconds - rate_seconds_ >= 1) {
    upstream_rate_known_ = true;
    upstream_ops_per_second_ =
        static_cast<double>(progress.upstream_ops - rate_ops_) /
        (progress.seconds - rate_seconds_);
    rate_ops_ = progress.upstream_ops;
    rate_seconds_ = progress.seconds;
  }
  JobProgressSample sample;
  sample.seconds = now;
  sample.snapshot_percent = estimate_.percent;
  sample.eta_seconds = estimate_.eta_seconds;
  sample.vnodes_finished = estimate_.vnodes_finished;
  sample.vnodes_total = options_.definition.upstream.vnode_count;
  // The actors' count is newer than the committed one the share is from;
  // the total is never below it.
  sample.snapshot_rows = std::max(progress.snapshot_rows, estimate_.rows_read);
  if (estimate_.estimated_total_rows > 0) {
    sample.estimated_total_rows =
        std::max(estimate_.estimated_total_rows, sample.snapshot_rows);
  }
  // A rate needs two samples a while apart: "--" until then, not 0 beside
  // rows already read.
  constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();
  sample.snapshot_rows_per_second =
      estimate_.rate_known ? estimate_.rows_per_second : kUnknown;
  if (!progress.backfill_done) {
    sample.rate_limit_rows_per_second = progress.rate_limit.ToOptionalU32();
    sample.target_unreachable = progress.adaptive_target_unreachable;
  }
  sample.upstream_ops = progress.upstream_ops;
  sample.upstream_ops_per_second =
      upstream_rate_known_ ? upstream_ops_per_second_ : kUnknown;
  sample.barrier_latency_p50_ms = progress.barrier_latency_p50_ms;
  sample.barrier_latency_p99_ms = progress.barrier_latency_p99_ms;
  sample.epochs = progress.epochs;
  sample.checkpoints = progress.checkpoints;
  last_sample_ = sample;
  if (display_.has_value()) {
    display_->Update(sample);
    last_shown_ = now;
  }
  return estimate_;
}

void LiveProgress::OnRecovery() {
  MutexLock lock(&mu_);
  phase_ = Phase::kRecovering;
  if (display_.has_value()) display_->Finish();
}

void LiveProgress::Finish() {
  {
    MutexLock lock(&mu_);
    stop_ = true;
    cv_.SignalAll();
  }
  if (ticker_.joinable()) ticker_.join();
  MutexLock lock(&mu_);
  if (display_.has_value()) {
    display_->Finish();
    display_.reset();
  }
}

}  // namespace backfill
