// BarrierCollector: a worker process's collection of barriers for its
// coordinator (checkpoint.proto's InjectBarrier and BarrierCollected). The
// coordinator injects each barrier into the job's source and tells every
// worker with actors, over the worker's control stream, which of its actors
// must emit it; the barrier reaches those actors through the data exchange.
// The two arrive in either order. Once the inject and every named actor's
// emission are here, the collector reports the barrier collected, once.
//
//   BarrierCollector collector;            // lives as long as the worker
//   // ActorService.RunAttempt:            collector.Begin(7, {100, 102});
//   //   each backfill actor's emission:   collector.Emitted(7, 100, epoch);
//   //   the attempt's end:                collector.End(7);
//   // the control stream's InjectBarrier: collector.Inject(7, epoch,
//   //     {100, 102}, [&](const absl::Status& s) { ... BarrierCollected });
//
// An attempt is named by its key (actor_service.proto's
// AttemptRequest.attempt_key, unique across attempts and coordinators).
// One attempt runs at a time: Begin replaces the one before (what it had
// not reported is dropped). Injects for an attempt that has not begun yet
// (the coordinator's RunAttempt call may arrive after its first inject, or
// wait behind an older attempt's) are kept until it begins, for the
// kMaxEarlyAttempts attempts injected last (older ones are dropped: their
// coordinator has moved on).
//
// The coordinator makes a barrier once the one before was collected (one
// barrier in flight per attempt, as the runtime's drivers do); an inject
// forgets emissions of earlier barriers that no inject waits for.
//
// Thread-safety: every method from any thread; a report runs on the thread
// whose call completed the barrier, with no lock held.
#ifndef EXECUTOR_CLUSTER_BARRIER_COLLECTOR_H_
#define EXECUTOR_CLUSTER_BARRIER_COLLECTOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "storage/epoch.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

class BarrierCollector {
 public:
  static constexpr size_t kMaxEarlyAttempts = 4;

  // OK once every actor named emitted the barrier; InvalidArgument when the
  // inject names other actors than the attempt's (the coordinator and the
  // worker disagree about the placement: it fails the attempt).
  using Report = std::function<void(const absl::Status&)>;

  // Attempt `attempt` runs `actors` here from now on. Injects already kept
  // for it are checked against them (and reported if they are complete).
  void Begin(uint64_t attempt, std::set<uint32_t> actors)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Attempt `attempt` ended: its pending injects are dropped (never
  // reported: the coordinator ended it). Another attempt's End does nothing.
  void End(uint64_t attempt) ABSL_LOCKS_EXCLUDED(mu_);

  // Backfill actor `actor` of `attempt` emitted the barrier of `epoch`.
  // Ignored unless `attempt` is the one running and `actor` is one of its.
  void Emitted(uint64_t attempt, uint32_t actor, EpochPair epoch)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The coordinator injected the barrier of `epoch` into attempt
  // `attempt`: `report` once each of `actors` emitted it (at once if they
  // all did already). Emissions of earlier barriers never injected are
  // forgotten (each barrier is injected before it can reach an actor, and
  // the control stream loses nothing while it is open).
  void Inject(uint64_t attempt, EpochPair epoch, std::vector<uint32_t> actors,
              Report report) ABSL_LOCKS_EXCLUDED(mu_);

  // Inject as a control stream's handler (CheckpointWorkerOptions::
  // on_inject, ClusterWorkerOptions::on_inject). This must outlive it.
  std::function<void(uint64_t, EpochPair, std::vector<uint32_t>, Report)>
  InjectHandler() {
    return [this](uint64_t attempt_key, EpochPair epoch,
                  std::vector<uint32_t> actors, Report report) {
      Inject(attempt_key, epoch, std::move(actors), std::move(report));
    };
  }

  // How many injects wait (for emissions, or for their attempt to begin),
  // and how many barriers' emissions wait for their inject. For tests.
  size_t pending_injects() const ABSL_LOCKS_EXCLUDED(mu_);
  size_t pending_emissions() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Pending {
    EpochPair epoch;
    std::set<uint32_t> actors;
    Report report;
  };
  // What to report, collected under the lock and run outside it.
  using Ready = std::vector<std::pair<Report, absl::Status>>;
  // An inject of the running attempt arriving (or its attempt beginning):
  // reports it (into `ready`) if it names other actors than the attempt's,
  // else as CompleteLocked; false if it must wait.
  bool AdmitLocked(Pending& pending, Ready& ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reports an admitted inject (into `ready`) once every actor emitted its
  // barrier; false if it must wait.
  bool CompleteLocked(Pending& pending, Ready& ready)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  static void Run(Ready& ready);

  mutable Mutex mu_;
  // The running attempt and its actors.
  std::optional<uint64_t> attempt_ ABSL_GUARDED_BY(mu_);
  std::set<uint32_t> actors_ ABSL_GUARDED_BY(mu_);
  // Per barrier (its curr epoch) of the running attempt: the actors that
  // emitted it so far.
  std::map<uint64_t, std::set<uint32_t>> emitted_ ABSL_GUARDED_BY(mu_);
  // Injects of the running attempt waiting for emissions, by curr epoch.
  std::map<uint64_t, Pending> waiting_ ABSL_GUARDED_BY(mu_);
  // Injects of attempts that have not begun, by key, and the keys in the
  // order they were first injected.
  std::map<uint64_t, std::vector<Pending>> early_ ABSL_GUARDED_BY(mu_);
  std::vector<uint64_t> early_order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace backfill

#endif  // EXECUTOR_CLUSTER_BARRIER_COLLECTOR_H_
