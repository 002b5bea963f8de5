// backfill_cluster: one backfill job over several processes on this machine
// (issue 19): a 3-member etcd cluster on free local ports, a local-directory
// object store, a coordinator process (the source, the view and the job's
// coordinator; it commits the checkpoints), a standby coordinator (it takes
// over through etcd's election when the leader dies) and N worker processes
// (the backfill actors, each worker with its own store object of the shared
// store, following whichever coordinator leads), which talk only over gRPC.
// The verdict is the runtime's: the view read back and compared with the
// table through the store's committed iterator. Fault flags inject one
// fault each once the job passed N epochs: a worker or the leader SIGKILLed,
// the etcd raft leader SIGKILLed, a worker paused past its lease, a worker
// whose actors hang while its process answers, a worker added.
//
//   bazel run -c opt //tools:backfill_cluster -- --workers=3
//       --kill_worker_after_epochs=10 --json
//
// The same binary is each process (--role=coordinator / --role=worker,
// started by the launcher or by hand). Everything the launcher started is
// stopped on every way out, Ctrl-C included. docs/cluster.md describes the
// processes, their ports and their limits.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "executor/cluster/actor_worker.h"
#include "executor/cluster/checkpoint_coordinator.h"
#include "executor/cluster/cluster_checkpoint_store.h"
#include "executor/cluster/cluster_placement.h"
#include "executor/cluster/cluster_worker.h"
#include "executor/cluster/job_state.h"
#include "executor/cluster/remote_exchange.h"
#include "executor/runtime/barrier_coordinator.h"
#include "executor/runtime/streaming_job.h"
#include "executor/runtime/threaded_driver.h"
#include "storage/shared/etcd_client.h"
#include "storage/shared/etcd_lease_keeper.h"
#include "storage/shared/etcd_test_cluster.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/shared_store_backend.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"
#include "third_party/absl_extras/status_macros.h"
#include "tools/command_flags.h"
#include "tools/exit_codes.h"
#include "tools/hanging_state_store.h"
#include "tools/progress_display.h"
#include "tools/scenario.h"
#include "tools/view_dumps.h"

ABSL_FLAG(uint32_t, workers, 3, "worker processes (>= 1)");
ABSL_FLAG(std::string, scenario, "",
          "scenario file (tools/scenarios/); empty: the default scenario");
ABSL_FLAG(uint32_t, parallelism, 0,
          "backfill actors (0: the scenario's), spread over the workers");
ABSL_FLAG(uint32_t, kill_worker_after_epochs, 0,
          "SIGKILL worker 0 (it runs backfill actor 100) once the job passed "
          "this many epochs (0: never)");
ABSL_FLAG(uint32_t, kill_coordinator_after_epochs, 0,
          "SIGKILL the leading coordinator once the job passed this many "
          "epochs; the standby takes over and finishes the job (0: never)");
ABSL_FLAG(uint32_t, kill_etcd_leader_after_epochs, 0,
          "SIGKILL the raft leader of the local etcd cluster once the job "
          "passed this many epochs (0: never)");
ABSL_FLAG(uint32_t, pause_worker_after_epochs, 0,
          "SIGSTOP the last worker once the job passed this many epochs and "
          "SIGCONT it --pause_seconds later: if its lease expires meanwhile "
          "it is fenced and the job goes on without it (0: never)");
ABSL_FLAG(uint32_t, pause_seconds, 8,
          "how long --pause_worker_after_epochs pauses the worker: more than "
          "--lease_seconds fences it when its lease expires; less, but more "
          "than --barrier_timeout_seconds, fences it at the timeout it causes "
          "(it holds up a barrier or a checkpoint reply the others answered)");
ABSL_FLAG(uint32_t, hang_worker_actors_after_epochs, 0,
          "make the last worker's backfill actors hang (SIGUSR1: every call "
          "into their tables blocks for good) once the job passed this many "
          "epochs, while its process answers and keeps its lease: the "
          "barrier it holds up times out (--barrier_timeout_seconds), the "
          "leader fences it and the job recovers without it (0: never)");
ABSL_FLAG(bool, hang_actors_on_sigusr1, false,
          "worker role: SIGUSR1 makes this worker's actors hang (as the "
          "launcher's --hang_worker_actors_after_epochs asks)");
ABSL_FLAG(uint32_t, add_worker_after_epochs, 0,
          "start one more worker once the job passed this many epochs (0: "
          "never)");
ABSL_FLAG(bool, standby, true,
          "also start a standby coordinator, which takes over (etcd election) "
          "when the leader dies");
ABSL_FLAG(uint32_t, barrier_timeout_seconds, 30,
          "a barrier not collected, or a checkpoint's reply not received, "
          "this long fails the attempt and the job recovers from the last "
          "checkpoint (a process hung while its lease is still kept)");
ABSL_FLAG(uint32_t, lease_seconds, 3,
          "TTL of every process's etcd lease: a dead or paused coordinator is "
          "replaced, a paused worker fenced, about this long after it stopped");
ABSL_FLAG(bool, json, false,
          "print only the JSON last line (not the summary line before it)");
ABSL_FLAG(std::string, data_dir, "",
          "directory for the object store, caches and etcd (default: a new "
          "one under $TMPDIR, removed at the end)");
ABSL_FLAG(std::string, object_store, "",
          "the shared object store: DIR or s3://BUCKET[/PREFIX] (default: "
          "DATA_DIR/objects); every process must see the same one");
ABSL_FLAG(std::string, listen_host, "127.0.0.1",
          "the host every service of the processes listens on (ports are "
          "chosen at start)");
ABSL_FLAG(std::string, dump_dir, "",
          "write DIR/upstream.tsv and DIR/view.tsv (as //tools:backfill's "
          "--dump_dir) once the job ended: the committed table and view");
ABSL_FLAG(std::string, role, "",
          "coordinator or worker: one process of the job, as the launcher "
          "starts it (docs/cluster.md); empty: the launcher");
ABSL_FLAG(std::string, etcd_endpoints, "",
          "etcd members HOST:PORT,... (launcher: empty starts a local "
          "3-member cluster)");
ABSL_FLAG(std::string, etcd_prefix, "backfill_cluster/",
          "the job's keys in etcd, ending with '/': its store's versions under "
          "PREFIX, its leases, vnode assignment and election under PREFIX "
          "without the '/' + '_job/'; each job on one etcd "
          "(--etcd_endpoints) needs its own, and a rerun the same one");
ABSL_FLAG(uint32_t, worker_index, 0, "worker role: this worker's number");
ABSL_FLAG(uint32_t, coordinator_index, 0,
          "coordinator role: this coordinator's number (its cache directory)");
ABSL_FLAG(std::string, run_id, "run",
          "every process of one run is given the same: the run's end is "
          "recorded under it in etcd");

namespace backfill {
namespace {

// The store's keys in etcd (--etcd_prefix).
std::string StorePrefix() { return absl::GetFlag(FLAGS_etcd_prefix); }

// Bad flags, a bad scenario, a run that could not start or finish (exit
// codes as //tools:backfill's).
constexpr int kExitError = static_cast<int>(ExitCode::kError);

// ---- Shared by the roles.

// "CODE: message", as //tools:backfill prints errors.
std::string ErrorText(const absl::Status& status) {
  return absl::StrCat(absl::StatusCodeToString(status.code()), ": ",
                      status.message());
}

absl::StatusOr<ScenarioSpec> LoadSpec() {
  const std::string path = absl::GetFlag(FLAGS_scenario);
  absl::StatusOr<tools::Scenario> scenario =
      path.empty() ? absl::StatusOr<tools::Scenario>(DefaultScenario())
                   : LoadScenarioFile(path);
  if (!scenario.ok()) return scenario.status();
  return ScenarioSpecFromProto(*scenario);
}

std::string ObjectStoreOf(const std::string& data_dir) {
  const std::string flag = absl::GetFlag(FLAGS_object_store);
  return flag.empty() ? (std::filesystem::path(data_dir) / "objects").string()
                      : flag;
}

std::string ListenAddress() {
  return absl::StrCat(absl::GetFlag(FLAGS_listen_host), ":0");
}

// The shared store of the job as one process opens it (its own cache).
absl::StatusOr<std::unique_ptr<SharedStoreBackend>> OpenBackend(
    const std::string& data_dir, const std::string& cache) {
  SharedStoreBackendOptions options;
  options.object_store = ObjectStoreOf(data_dir);
  absl::StatusOr<std::vector<std::string>> endpoints =
      ParseEtcdEndpoints(absl::GetFlag(FLAGS_etcd_endpoints));
  if (!endpoints.ok()) return endpoints.status();
  options.etcd_endpoints = *endpoints;
  options.etcd_prefix = StorePrefix();
  options.cache_dir = (std::filesystem::path(data_dir) / cache).string();
  return SharedStoreBackend::Start(options);
}

// One line on stdout, at once (the launcher reads the children's).
void Say(const std::string& line) { std::cout << line << std::endl; }

// A role's error: one line on stderr (the launcher relays it and keeps the
// last one, naming it in its own error when the role ends the run).
int Fail(const std::string& role, const absl::Status& status) {
  std::cerr << "backfill_cluster " << role << ": error: " << ErrorText(status)
            << "\n";
  return kExitError;
}

// ---- The coordinator process (the leader or a standby).

// The job's control-plane keys (leases, the vnode assignment, the
// election: executor/cluster/job_state.h), beside the store's.
// The default prefix's is "backfill_cluster_job/", the key of every job
// before --etcd_prefix existed.
std::string JobPrefix() {
  const std::string prefix = StorePrefix();
  return absl::StrCat(absl::string_view(prefix).substr(0, prefix.size() - 1),
                      "_job/");
}

// Written by the coordinator that finished the run (its RESULT line), so
// that a standby and the workers know the job is over and stop.
std::string DoneKey() {
  return absl::StrCat(JobPrefix(), "done/", absl::GetFlag(FLAGS_run_id));
}

// Whether the run's done key is there (an etcd error counts as no).
bool RunIsDone(EtcdClient& etcd) {
  absl::StatusOr<std::optional<EtcdKeyValue>> done = etcd.Get(DoneKey());
  return done.ok() && done->has_value();
}

absl::StatusOr<std::unique_ptr<EtcdLeaseKeeper>> KeepLease(EtcdClient& etcd) {
  absl::StatusOr<EtcdLease> lease =
      etcd.GrantLease(absl::Seconds(absl::GetFlag(FLAGS_lease_seconds)));
  if (!lease.ok()) return lease.status();
  return EtcdLeaseKeeper::Start(etcd, *lease, {});
}

// Until every worker of the job's state (those the previous leader had) is
// connected again, or the deadline: a checkpoint asks each of them, and one
// not yet back would fail it. A worker that died meanwhile leaves the state
// once its lease expires.
void WaitForStateWorkers(CheckpointCoordinator& checkpoints,
                         absl::Time deadline) {
  while (absl::Now() < deadline) {
    std::optional<ClusterJobState> state = checkpoints.State();
    if (!state.has_value()) return;
    const std::vector<std::string> live = checkpoints.LiveWorkers();
    bool all = true;
    for (const WorkerVnodes& worker : state->workers) {
      if (std::find(live.begin(), live.end(), worker.worker_id) == live.end()) {
        all = false;
      }
    }
    if (all) return;
    absl::SleepFor(absl::Milliseconds(50));
  }
}

// A worker that registers while an attempt runs is not used by it (its
// actors were placed over the workers live at its start). This asks the
// attempt to end at its next checkpoint barrier (a reschedule: every actor
// stops there and that checkpoint commits all they did), and the next
// attempt places the actors again over every live worker, by the vnode
// assignment that now includes the new one: the re-split of an added
// worker at the next checkpoint, with nothing redone and no recovery.
class ResplitOnJoin {
 public:
  explicit ResplitOnJoin(CheckpointCoordinator& checkpoints)
      : checkpoints_(checkpoints), thread_([this] { Watch(); }) {}
  ~ResplitOnJoin() {
    {
      MutexLock lock(&mu_);
      stopping_ = true;
      changed_.SignalAll();
    }
    thread_.join();
  }
  // The attempt runs the workers of `sessions`.
  void Begin(BarrierCoordinator& attempt, std::set<uint64_t> sessions)
      ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    attempt_ = &attempt;
    sessions_ = std::move(sessions);
  }
  void End() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    attempt_ = nullptr;
  }

 private:
  void Watch() ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    while (!stopping_) {
      changed_.WaitWithTimeout(&mu_, absl::Milliseconds(200));
      if (stopping_ || attempt_ == nullptr) continue;
      for (const CheckpointCoordinator::LiveWorker& worker :
           checkpoints_.LiveWorkerEndpoints()) {
        if (sessions_.contains(worker.session) ||
            !worker.endpoints.contains("actor")) {
          continue;
        }
        Say(absl::StrCat("RESPLIT ", worker.worker_id, " joined"));
        attempt_->RequestReschedule(absl::StrCat(
            "worker '", worker.worker_id,
            "' joined: the actors are placed again over every live worker "
            "from the next checkpoint"));
        attempt_ = nullptr;
        break;
      }
    }
  }

  CheckpointCoordinator& checkpoints_;
  Mutex mu_;
  CondVar changed_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  BarrierCoordinator* attempt_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::set<uint64_t> sessions_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;  // Last: starts once the rest is built.
};

// A ClusterPlacement that tells a ResplitOnJoin when its attempt runs.
class WatchedPlacement final : public AttemptPlacement {
 public:
  WatchedPlacement(std::unique_ptr<ClusterPlacement> placement,
                   std::set<uint64_t> sessions, ResplitOnJoin& watcher)
      : placement_(std::move(placement)),
        sessions_(std::move(sessions)),
        watcher_(watcher) {}
  ~WatchedPlacement() override { watcher_.End(); }
  bool IsLocal(ActorId actor) const override {
    return placement_->IsLocal(actor);
  }
  absl::Status Serve(ActorId upstream, ActorId downstream, const Schema& schema,
                     ChannelReceiver receiver) override {
    return placement_->Serve(upstream, downstream, schema, std::move(receiver));
  }
  absl::Status Receive(ActorId upstream, ActorId downstream,
                       const Schema& schema, ChannelSender sender) override {
    return placement_->Receive(upstream, downstream, schema, std::move(sender));
  }
  absl::Status StartRemote(const JobState& state, JobGraph& graph,
                           BarrierCoordinator& coordinator) override {
    absl::Status started = placement_->StartRemote(state, graph, coordinator);
    if (started.ok()) watcher_.Begin(coordinator, sessions_);
    return started;
  }
  absl::Status EndRemote() override {
    watcher_.End();
    return placement_->EndRemote();
  }

 private:
  std::unique_ptr<ClusterPlacement> placement_;
  const std::set<uint64_t> sessions_;
  ResplitOnJoin& watcher_;
};

// The leader records the end of the run (its result, or the job's error):
// the standby and the workers exit when they see it. Only while it leads (a
// deposed leader's job failed for that reason; its successor goes on).
void RecordRunEnd(CheckpointCoordinator& checkpoints, const std::string& role,
                  const std::string& end) {
  absl::StatusOr<bool> put = checkpoints.PutIfLeading({DoneKey(), end});
  if (!put.ok()) {
    std::cerr << "backfill_cluster " << role
              << ": warning: cannot record the end of the run: " << put.status()
              << "\n";
  } else if (!*put) {
    std::cerr << "backfill_cluster " << role
              << ": no longer leads: the end of its run is not recorded\n";
  }
}

int RunCoordinator(const std::string& data_dir) {
  const std::string role =
      absl::StrCat("coordinator ", absl::GetFlag(FLAGS_coordinator_index));
  absl::StatusOr<ScenarioSpec> spec = LoadSpec();
  if (!spec.ok()) return Fail(role, spec.status());
  absl::StatusOr<std::unique_ptr<SharedStoreBackend>> backend = OpenBackend(
      data_dir, absl::StrCat("cache-coordinator-",
                             absl::GetFlag(FLAGS_coordinator_index)));
  if (!backend.ok()) return Fail(role, backend.status());
  EtcdClient& etcd = *(*backend)->store_options().etcd;
  absl::StatusOr<std::unique_ptr<EtcdLeaseKeeper>> lease = KeepLease(etcd);
  if (!lease.ok()) return Fail(role, lease.status());
  CheckpointCoordinatorOptions checkpoint_options;
  checkpoint_options.commit_own_data = true;
  checkpoint_options.listen_address = ListenAddress();
  checkpoint_options.etcd = &etcd;
  checkpoint_options.job_prefix = JobPrefix();
  checkpoint_options.lease_id = (*lease)->lease().id;
  // Every fence (a lease expired, or a worker that held up a barrier or a
  // checkpoint reply), for the launcher's tally.
  checkpoint_options.on_fence = [](const std::string& worker,
                                   const absl::Status& why) {
    Say(absl::StrCat("FENCED ", worker, " ", why.ToString()));
  };
  // The assignment splits the table's vnodes (the actors are placed by it).
  checkpoint_options.num_vnodes =
      static_cast<uint32_t>(spec->job.upstream.vnode_count);
  checkpoint_options.reply_timeout =
      absl::Seconds(absl::GetFlag(FLAGS_barrier_timeout_seconds));
  // Opened when this coordinator takes over: it loads the version the last
  // leader committed.
  checkpoint_options.open_store = [&backend] {
    return SharedStateStore::Open((*backend)->store_options());
  };
  absl::StatusOr<std::unique_ptr<CheckpointCoordinator>> checkpoints =
      CheckpointCoordinator::Start(checkpoint_options);
  if (!checkpoints.ok()) return Fail(role, checkpoints.status());
  Say(absl::StrCat("READY ", (*checkpoints)->address()));
  // A standby waits here until the leader is gone or the run is over (also
  // checked once leading: the leader resigns after it recorded the end).
  while (true) {
    const absl::Status leading =
        (*checkpoints)->WaitUntilLeading(absl::Now() + absl::Milliseconds(200));
    if (!leading.ok() && !absl::IsDeadlineExceeded(leading)) {
      return Fail(role, leading);
    }
    if (RunIsDone(etcd)) {
      Say("STANDBY_DONE the run ended under another coordinator");
      return 0;
    }
    if (leading.ok()) break;
  }
  SharedStateStore& committer = *(*checkpoints)->store();
  Say(absl::StrCat("LEADING address ", (*checkpoints)->address(),
                   " committed_epoch ",
                   committer.CommittedEpoch(/*table_id=*/0).value()));
  absl::StatusOr<std::unique_ptr<ExchangeServer>> exchange =
      ExchangeServer::Start({.listen_address = ListenAddress()});
  if (!exchange.ok()) return Fail(role, exchange.status());
  std::optional<ClusterJobState> state = (*checkpoints)->State();
  if (state.has_value() && !state->workers.empty()) {
    // A takeover: the workers come back on their own.
    WaitForStateWorkers(**checkpoints, absl::Now() + absl::Seconds(60));
  } else if (absl::Status joined =
                 (*checkpoints)
                     ->WaitForWorkers(absl::GetFlag(FLAGS_workers),
                                      absl::Now() + absl::Seconds(120));
             !joined.ok()) {
    return Fail(role, joined);
  }
  // The job's store; a recovery reopens the committer's store (a failed
  // commit leaves it refusing commits; another committer's version may have
  // overtaken it) and makes a new one over it.
  auto store =
      std::make_unique<ClusterCheckpointStore>(committer, **checkpoints);
  StreamingJobOptions options = spec->job;
  options.barrier_timeout =
      absl::Seconds(absl::GetFlag(FLAGS_barrier_timeout_seconds));
  if (const uint32_t parallelism = absl::GetFlag(FLAGS_parallelism);
      parallelism > 0) {
    options.parallelism = parallelism;
  }
  options.on_recovery = [](const absl::Status& error, uint32_t recovery) {
    Say(absl::StrCat("RECOVERY ", recovery, " ", error.ToString()));
  };
  options.on_reschedule = [](const std::string& reason) {
    Say(absl::StrCat("RESCHEDULE ", reason));
  };
  options.reopen_store = [&]() -> absl::StatusOr<StateStore*> {
    BACKFILL_ASSIGN_OR_RETURN(SharedStateStore * reopened,
                              (*checkpoints)->ReopenStore());
    store = std::make_unique<ClusterCheckpointStore>(*reopened, **checkpoints);
    return store.get();
  };
  uint64_t attempt = 0;
  ResplitOnJoin resplit(**checkpoints);
  PlacementFactory placement = [&](const JobState& job_state)
      -> absl::StatusOr<std::unique_ptr<AttemptPlacement>> {
    std::vector<WorkerEndpoint> live;
    std::set<uint64_t> sessions;
    for (const CheckpointCoordinator::LiveWorker& worker :
         (*checkpoints)->LiveWorkerEndpoints()) {
      auto actor = worker.endpoints.find("actor");
      auto exchange_address = worker.endpoints.find("exchange");
      if (actor == worker.endpoints.end() ||
          exchange_address == worker.endpoints.end()) {
        continue;
      }
      live.push_back({worker.worker_id, worker.session, actor->second,
                      exchange_address->second});
      sessions.insert(worker.session);
    }
    // Each backfill actor runs on the worker its vnodes are assigned to in
    // the job's state (the coordinator re-splits it as workers join and
    // leave).
    const std::optional<ClusterJobState> assignment = (*checkpoints)->State();
    if (!assignment.has_value()) {
      return absl::UnavailableError("no vnode assignment yet: no worker");
    }
    BACKFILL_ASSIGN_OR_RETURN(
        std::vector<size_t> actor_workers,
        ActorWorkersByAssignment(*assignment, live,
                                 options.upstream.vnode_count,
                                 job_state.parallelism));
    std::string placed;
    for (size_t i = 0; i < actor_workers.size(); ++i) {
      absl::StrAppend(&placed, i == 0 ? "" : ",",
                      JobGraph::kFirstBackfillActor + i, ":",
                      live[actor_workers[i]].worker_id);
    }
    Say(absl::StrCat("ATTEMPT ", attempt + 1, " workers ", live.size(),
                     " assignment ", assignment->assignment_version, " actors ",
                     placed));
    return std::make_unique<WatchedPlacement>(
        std::make_unique<ClusterPlacement>(**exchange, *(*checkpoints)->store(),
                                           *store, std::move(live), ++attempt,
                                           std::move(actor_workers)),
        std::move(sessions), resplit);
  };
  auto observer = [&checkpoints](const JobProgress& progress) {
    // `since_creation`: the job's barriers since the view's creation, which
    // a coordinator that takes over continues (the launcher's fault epochs
    // count these); EPOCH counts this coordinator's own.
    Say(absl::StrCat(
        "EPOCH ", progress.epochs, " checkpoints ", progress.checkpoints,
        " snapshot_rows ", progress.snapshot_rows, " committed ",
        (*checkpoints)->store()->CommittedEpoch(0).value(), " since_creation ",
        progress.job_state.epochs_since_creation, " backfill_done ",
        progress.backfill_done ? 1 : 0));
  };
  absl::StatusOr<JobResult> result = RunStreamingJobWithDriver(
      *store, options, nullptr, observer, Clock::Real(),
      [&](JobGraph& graph, BarrierCoordinator& coordinator) {
        return RunThreaded(graph, coordinator, options.barrier_interval,
                           Clock::Real());
      },
      placement);
  if (!result.ok()) {
    // The job failed (not this coordinator): the run is over, and a standby
    // must not run it again. A leader that lost the lead leaves it to the
    // new one.
    RecordRunEnd(**checkpoints, role,
                 absl::StrCat("FAILED ", result.status().ToString()));
    (*checkpoints)->Shutdown();
    return Fail(role, result.status());
  }
  if (const std::string dir = absl::GetFlag(FLAGS_dump_dir); !dir.empty()) {
    absl::Status dumped = absl::OkStatus();
    std::error_code made;
    std::filesystem::create_directories(dir, made);
    absl::StatusOr<ViewVerdict> verdict =
        WriteViewDumps(*store, options, *spec, dir);
    if (!verdict.ok()) {
      dumped = verdict.status();
    } else if (verdict->consistent != result->consistent ||
               verdict->view_rows != result->view_rows ||
               verdict->upstream_rows != result->upstream_rows) {
      dumped = absl::InternalError(absl::StrCat(
          "the dumps' verification (consistent ", verdict->consistent, ", ",
          verdict->upstream_rows, " and ", verdict->view_rows,
          " rows) disagrees with the job's"));
    }
    if (!dumped.ok()) {
      (*checkpoints)->Shutdown();
      return Fail(role, dumped);
    }
  }
  const std::string line = absl::StrCat(
      "RESULT consistent ", result->consistent ? 1 : 0, " upstream_rows ",
      result->upstream_rows, " view_rows ", result->view_rows,
      " snapshot_rows ", result->snapshot_rows, " recoveries ",
      result->recoveries, " epochs ", result->epochs, " seconds ",
      result->seconds, " snapshot_rows_per_second ",
      result->snapshot_rows_per_second);
  // Before resigning: a standby that takes over then finds the job done.
  RecordRunEnd(**checkpoints, role, line);
  (*checkpoints)->Shutdown();
  Say(line);
  if (!result->consistent) {
    std::cerr << "backfill_cluster " << role
              << ": INCONSISTENT: " << result->mismatch << "\n";
  }
  return result->consistent ? 0 : 1;
}

// ---- A worker process.

int RunWorker(const std::string& data_dir) {
  const uint32_t index = absl::GetFlag(FLAGS_worker_index);
  const std::string role = absl::StrCat("worker ", index);
  absl::StatusOr<ScenarioSpec> spec = LoadSpec();
  if (!spec.ok()) return Fail(role, spec.status());
  absl::StatusOr<std::unique_ptr<SharedStoreBackend>> backend =
      OpenBackend(data_dir, absl::StrCat("cache-worker-", index));
  if (!backend.ok()) return Fail(role, backend.status());
  EtcdClient& etcd = *(*backend)->store_options().etcd;
  absl::StatusOr<std::unique_ptr<SharedStateStore>> store =
      SharedStateStore::Open((*backend)->store_options());
  if (!store.ok()) return Fail(role, store.status());
  const StreamingJobOptions options = spec->job;
  // The fault of --hang_worker_actors_after_epochs: on SIGUSR1 every call of
  // the actors into their tables blocks; the rest of the process goes on.
  const bool hang_on_signal = absl::GetFlag(FLAGS_hang_actors_on_sigusr1);
  HangingStateStore hanging(store->get());
  if (hang_on_signal) signal(SIGUSR1, [](int) { ActorHang::Arm(); });
  absl::StatusOr<std::unique_ptr<ActorWorker>> actors = ActorWorker::Start(
      {.listen_address = ListenAddress(),
       .exchange_listen_address = ListenAddress(),
       .store =
           hang_on_signal ? static_cast<StateStore*>(&hanging) : store->get(),
       .shared_store = store->get(),
       .options = &options});
  if (!actors.ok()) return Fail(role, actors.status());
  absl::StatusOr<std::unique_ptr<EtcdLeaseKeeper>> lease = KeepLease(etcd);
  if (!lease.ok()) return Fail(role, lease.status());
  // Follows whichever coordinator leads (found through the election) and
  // registers again with the same lease after a failover.
  ClusterWorkerOptions worker_options;
  worker_options.etcd = &etcd;
  worker_options.job_prefix = JobPrefix();
  worker_options.worker_id = absl::StrCat("worker-", index);
  worker_options.store = store->get();
  worker_options.lease_id = (*lease)->lease().id;
  worker_options.endpoints = {{"actor", (*actors)->address()},
                              {"exchange", (*actors)->exchange_address()}};
  // The barriers the leader injects are collected from this worker's actors
  // and answered on its control stream.
  worker_options.on_inject = (*actors)->collector().InjectHandler();
  absl::StatusOr<std::unique_ptr<ClusterWorker>> follower =
      ClusterWorker::Start(worker_options);
  if (!follower.ok()) return Fail(role, follower.status());
  if (absl::Status registered =
          (*follower)->WaitForRegistrations(1, absl::Now() + absl::Seconds(60));
      !registered.ok()) {
    return Fail(role, registered);
  }
  Say(absl::StrCat("READY ", (*actors)->address()));
  // Until the run is over (its done key), this worker is fenced (its lease
  // expired: a paused process), or it is killed.
  int exit_code = 0;
  while (true) {
    if (const absl::Status status = (*follower)->status(); !status.ok()) {
      Say(absl::StrCat("FENCED ", status.ToString()));
      exit_code = 3;
      break;
    }
    if (RunIsDone(etcd)) break;
    absl::SleepFor(absl::Milliseconds(200));
  }
  if (ActorHang::armed()) {
    // Its actors never return: nothing can be stopped in order, and nothing
    // this worker holds counts any more (it was fenced, or the run is over).
    std::cout.flush();
    std::_Exit(exit_code);
  }
  (*follower)->Stop();
  (*actors)->Shutdown();
  return exit_code;
}

// ---- The launcher.

// The children, for the signal handler: a fixed array of atomics (no
// allocation a signal could interrupt); -1 when free or reaped.
constexpr int kMaxChildren = 256;
std::atomic<pid_t> g_children[kMaxChildren];
std::atomic<bool> g_interrupted{false};

void OnSignal(int) {
  g_interrupted.store(true);
  for (std::atomic<pid_t>& pid : g_children) {
    const pid_t child = pid.load();
    if (child > 0) kill(child, SIGKILL);
  }
}

void ForgetChild(pid_t pid) {
  for (std::atomic<pid_t>& slot : g_children) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, -1)) return;
  }
}

struct Spawned {
  pid_t pid = -1;
  FILE* out = nullptr;  // its stdout
  FILE* err = nullptr;  // its stderr
};

// Starts this binary with `args`; its stdout and stderr are readable from
// Spawned::out and Spawned::err.
absl::StatusOr<Spawned> Spawn(const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  int err_fds[2];
  if (pipe(err_fds) != 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  if (g_interrupted.load()) {
    for (int fd : {pipe_fds[0], pipe_fds[1], err_fds[0], err_fds[1]}) {
      close(fd);
    }
    return absl::CancelledError("interrupted");
  }
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  const pid_t parent = getpid();
  // No signal between the fork and the registration of the child: a Ctrl-C
  // then would leave it running.
  sigset_t block, previous;
  sigemptyset(&block);
  sigaddset(&block, SIGINT);
  sigaddset(&block, SIGTERM);
  sigprocmask(SIG_BLOCK, &block, &previous);
  const pid_t pid = fork();
  if (pid < 0) {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    for (int fd : {pipe_fds[0], pipe_fds[1], err_fds[0], err_fds[1]}) {
      close(fd);
    }
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &previous, nullptr);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    // Dies with the launcher, whatever kills it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(err_fds[1], STDERR_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    close(err_fds[0]);
    close(err_fds[1]);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(self.c_str()));
    for (const std::string& arg : args) {
      argv.push_back(const_cast<char*>(arg.c_str()));
    }
    argv.push_back(nullptr);
    execv(self.c_str(), argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  close(err_fds[1]);
  bool registered = false;
  for (std::atomic<pid_t>& slot : g_children) {
    pid_t expected = -1;
    if (slot.compare_exchange_strong(expected, pid)) {
      registered = true;
      break;
    }
  }
  sigprocmask(SIG_SETMASK, &previous, nullptr);
  if (!registered) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    close(pipe_fds[0]);
    close(err_fds[0]);
    return absl::ResourceExhaustedError("too many child processes");
  }
  return Spawned{pid, fdopen(pipe_fds[0], "r"), fdopen(err_fds[0], "r")};
}

// The next line of `out`; nullopt at its end.
std::optional<std::string> ReadLine(FILE* out) {
  char* line = nullptr;
  size_t capacity = 0;
  const ssize_t length = getline(&line, &capacity, out);
  if (length < 0) {
    free(line);
    return std::nullopt;
  }
  std::string text(line, static_cast<size_t>(length));
  free(line);
  return std::string(absl::StripTrailingAsciiWhitespace(text));
}

// One line of a child's stdout, or its end (nullopt).
struct Event {
  size_t child = 0;
  std::optional<std::string> line;
};

// What the children's reader threads saw, in order.
class Events {
 public:
  void Push(Event event) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    queue_.push_back(std::move(event));
    changed_.Signal();
  }
  // The next event; nullopt at `deadline`.
  std::optional<Event> Pop(absl::Time deadline) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    while (queue_.empty()) {
      const absl::Duration left = deadline - absl::Now();
      if (left <= absl::ZeroDuration()) return std::nullopt;
      changed_.WaitWithTimeout(&mu_, left);
    }
    Event event = std::move(queue_.front());
    queue_.pop_front();
    return event;
  }

 private:
  Mutex mu_;
  CondVar changed_;
  std::deque<Event> queue_ ABSL_GUARDED_BY(mu_);
};

// The status in a role's error line ("backfill_cluster coordinator 0: error:
// UNAVAILABLE: ..." gives "UNAVAILABLE: ..."); empty for any other line.
std::string ErrorOfLine(absl::string_view line) {
  constexpr absl::string_view kMarker = ": error: ";
  if (!absl::StartsWith(line, "backfill_cluster ")) return "";
  const size_t at = line.find(kMarker);
  if (at == absl::string_view::npos) return "";
  return std::string(line.substr(at + kMarker.size()));
}

// A process the launcher started; a thread of its own reads its stdout,
// another its stderr.
struct Child {
  std::string name;  // "coordinator 0", "worker 2"
  bool coordinator = false;
  uint32_t index = 0;
  pid_t pid = -1;  // -1 once reaped
  FILE* out = nullptr;
  std::thread reader;
  FILE* err = nullptr;
  // Relays its stderr to the launcher's, line by line, and keeps last_error.
  std::thread err_reader;
  // The status of the last error line it printed (ErrorOfLine); written by
  // err_reader only, read once err_reader was joined (StopChild).
  std::string last_error;
  bool ready = false;
  bool killed = false;  // on purpose, by the launcher
  bool paused = false;
  int exit_code = -1;  // once reaped: its exit code, or 128 + its signal
};

void Reap(Child& child, int signal) {
  if (child.pid <= 0) return;
  if (signal != 0) {
    kill(child.pid, signal);
    kill(child.pid, SIGCONT);  // A paused process would not act on SIGTERM.
  }
  int status = 0;
  waitpid(child.pid, &status, 0);
  ForgetChild(child.pid);
  child.pid = -1;
  child.exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                    : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                          : 2;
}

// Reaps the child (after `signal`, if not 0) and lets go of its stdout.
void StopChild(Child& child, int signal) {
  Reap(child, signal);
  if (child.reader.joinable()) child.reader.join();  // Its pipe ended.
  if (child.err_reader.joinable()) child.err_reader.join();
  if (child.out != nullptr) {
    fclose(child.out);
    child.out = nullptr;
  }
  if (child.err != nullptr) {
    fclose(child.err);
    child.err = nullptr;
  }
}

// The number after the word `key` in a child's line ("EPOCH 20 ...
// committed 19": NumberAfter(line, "committed") is 19); nullopt if absent.
std::optional<uint64_t> NumberAfter(const std::string& line,
                                    absl::string_view key) {
  const std::vector<absl::string_view> words = absl::StrSplit(line, ' ');
  auto it = std::find(words.begin(), words.end(), key);
  uint64_t value = 0;
  if (it == words.end() || it + 1 == words.end() ||
      !absl::SimpleAtoi(*(it + 1), &value)) {
    return std::nullopt;
  }
  return value;
}

std::map<std::string, std::string> ParseResult(const std::string& line) {
  std::map<std::string, std::string> fields;
  std::vector<std::string> words = absl::StrSplit(line, ' ');
  for (size_t i = 1; i + 1 < words.size(); i += 2) {
    fields[words[i]] = words[i + 1];
  }
  return fields;
}

// The faults the launcher injects, each once the job passed its epoch.
struct Faults {
  uint32_t kill_worker_after = 0;
  uint32_t kill_coordinator_after = 0;
  uint32_t kill_etcd_leader_after = 0;
  uint32_t pause_worker_after = 0;
  absl::Duration pause = absl::ZeroDuration();
  uint32_t hang_worker_actors_after = 0;
  uint32_t add_worker_after = 0;
};

// What happened during the run, for the summary and the JSON line.
struct Tally {
  uint32_t workers_killed = 0;
  uint32_t workers_added = 0;
  uint32_t workers_paused = 0;
  uint32_t workers_hung = 0;
  // Distinct workers fenced: named by a leader's FENCED line, or by the
  // worker's own (it learnt it when it registered again).
  std::set<std::string> fenced_workers;
  uint32_t coordinators_killed = 0;
  uint32_t etcd_leaders_killed = 0;
  uint32_t takeovers =
      0;  // LEADING lines: the first leader's and each failover's
  uint32_t recoveries = 0;   // RECOVERY lines, of every leader
  uint32_t reschedules = 0;  // RESCHEDULE lines, of every leader
  // Faults injected once the backfill had finished (an EPOCH line said
  // backfill_done; an added worker is not a fault): little or no snapshot
  // was left to read (the finish may not be checkpointed yet), so such a
  // fault may end in no recovery at all, and that is not a failed test of
  // one.
  uint32_t faults_after_backfill = 0;
};

absl::Status CheckFlags(uint32_t num_workers, const Faults& faults,
                        bool standby, bool local_etcd) {
  if (num_workers < 1) {
    return absl::InvalidArgumentError("--workers must be >= 1");
  }
  if (faults.kill_coordinator_after > 0 && !standby) {
    return absl::InvalidArgumentError(
        "--kill_coordinator_after_epochs needs the standby coordinator "
        "(--standby)");
  }
  if (faults.kill_etcd_leader_after > 0 && !local_etcd) {
    return absl::InvalidArgumentError(
        "--kill_etcd_leader_after_epochs kills a member of the local etcd "
        "cluster: it cannot be used with --etcd_endpoints");
  }
  if (faults.pause_worker_after > 0 && num_workers < 2) {
    return absl::InvalidArgumentError(
        "--pause_worker_after_epochs needs --workers >= 2 (the paused worker "
        "is fenced and the job goes on without it)");
  }
  if (faults.hang_worker_actors_after > 0 && num_workers < 2) {
    return absl::InvalidArgumentError(
        "--hang_worker_actors_after_epochs needs --workers >= 2 (the hung "
        "worker is fenced and the job goes on without it)");
  }
  if (faults.pause_worker_after > 0 && faults.pause <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--pause_seconds must be > 0");
  }
  if (absl::GetFlag(FLAGS_barrier_timeout_seconds) < 1 ||
      absl::GetFlag(FLAGS_lease_seconds) < 1) {
    return absl::InvalidArgumentError(
        "--barrier_timeout_seconds and --lease_seconds must be >= 1");
  }
  return absl::OkStatus();
}

// The launcher's JSON line (docs/cluster.md): `result` the fields of the
// coordinator's RESULT line (empty: none, and `error` says why).
std::string ResultJson(uint32_t workers, const Tally& tally,
                       const std::map<std::string, std::string>& result,
                       const std::string& error) {
  // A field of the coordinator's RESULT line; "0" when there is none.
  auto field = [&result](const std::string& key) {
    auto it = result.find(key);
    return it == result.end() || it->second.empty() ? std::string("0")
                                                    : it->second;
  };
  const uint32_t failovers = tally.takeovers > 0 ? tally.takeovers - 1 : 0;
  std::string json = absl::StrCat(
      "{\"consistent\":", field("consistent") == "1" ? "true" : "false",
      ",\"workers\":", workers, ",\"workers_killed\":", tally.workers_killed,
      ",\"coordinator_failovers\":", failovers,
      ",\"recoveries\":", tally.recoveries,
      ",\"upstream_rows\":", field("upstream_rows"),
      ",\"view_rows\":", field("view_rows"),
      ",\"snapshot_rows\":", field("snapshot_rows"),
      ",\"seconds\":", field("seconds"),
      ",\"snapshot_rows_per_second\":", field("snapshot_rows_per_second"));
  absl::StrAppend(&json, ",\"coordinators_killed\":", tally.coordinators_killed,
                  ",\"etcd_leaders_killed\":", tally.etcd_leaders_killed,
                  ",\"workers_added\":", tally.workers_added,
                  ",\"workers_paused\":", tally.workers_paused,
                  ",\"workers_hung\":", tally.workers_hung,
                  ",\"workers_fenced\":", tally.fenced_workers.size(),
                  ",\"reschedules\":", tally.reschedules,
                  ",\"faults_after_backfill\":", tally.faults_after_backfill);
  if (result.empty()) absl::StrAppend(&json, ",\"error\":", JsonQuote(error));
  return json + "}";
}

// An error before the run started anything (bad flags, a bad scenario, a
// store that cannot be opened): one line on stderr, no summary, and the JSON
// line (nothing ran: every count 0, and the error) as the last line of
// stdout, with or without --json, as //tools:backfill does.
int FailLauncher(const absl::Status& status) {
  std::cerr << "backfill_cluster: error: " << ErrorText(status) << "\n";
  std::cout << ResultJson(0, Tally{}, {}, ErrorText(status)) << std::endl;
  return kExitError;
}

int RunLauncher() {
  const uint32_t num_workers = absl::GetFlag(FLAGS_workers);
  const bool json = absl::GetFlag(FLAGS_json);
  const bool standby = absl::GetFlag(FLAGS_standby);
  Faults faults;
  faults.kill_worker_after = absl::GetFlag(FLAGS_kill_worker_after_epochs);
  faults.kill_coordinator_after =
      absl::GetFlag(FLAGS_kill_coordinator_after_epochs);
  faults.kill_etcd_leader_after =
      absl::GetFlag(FLAGS_kill_etcd_leader_after_epochs);
  faults.pause_worker_after = absl::GetFlag(FLAGS_pause_worker_after_epochs);
  faults.pause = absl::Seconds(absl::GetFlag(FLAGS_pause_seconds));
  faults.hang_worker_actors_after =
      absl::GetFlag(FLAGS_hang_worker_actors_after_epochs);
  faults.add_worker_after = absl::GetFlag(FLAGS_add_worker_after_epochs);
  if (absl::Status flags =
          CheckFlags(num_workers, faults, standby,
                     absl::GetFlag(FLAGS_etcd_endpoints).empty());
      !flags.ok()) {
    return FailLauncher(flags);
  }
  absl::StatusOr<ScenarioSpec> spec = LoadSpec();
  if (!spec.ok()) return FailLauncher(spec.status());
  // Refused before anything starts: the runtime would refuse it at the
  // action's epoch, and every recovery again.
  for (const JobAction& action : spec->job.actions) {
    if (action.kind == JobAction::Kind::kRescale) {
      return FailLauncher(absl::InvalidArgumentError(absl::StrCat(
          "the scenario rescales online (", JobActionDebugString(action),
          "); a job split over processes is not rescaled online (run it "
          "with //tools:backfill)")));
    }
  }
  std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  const bool own_dir = data_dir.empty();
  if (own_dir) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "backfill_cluster.XXXXXX")
            .string();
    if (mkdtemp(pattern.data()) == nullptr) {
      return FailLauncher(absl::InternalError(
          absl::StrCat("mkdtemp ", pattern, ": ", std::strerror(errno))));
    }
    data_dir = pattern;
  }
  if (std::error_code created;
      !std::filesystem::create_directories(data_dir, created) && created) {
    return FailLauncher(absl::FailedPreconditionError(
        absl::StrCat("cannot create the data directory ", data_dir, ": ",
                     created.message())));
  }
  for (std::atomic<pid_t>& slot : g_children) slot.store(-1);
  signal(SIGINT, OnSignal);
  signal(SIGTERM, OnSignal);

  // etcd: a local 3-member cluster, stopped with `backend`.
  SharedStoreBackendOptions backend_options;
  backend_options.object_store = ObjectStoreOf(data_dir);
  if (!absl::GetFlag(FLAGS_etcd_endpoints).empty()) {
    absl::StatusOr<std::vector<std::string>> endpoints =
        ParseEtcdEndpoints(absl::GetFlag(FLAGS_etcd_endpoints));
    if (!endpoints.ok()) {
      if (own_dir) std::filesystem::remove_all(data_dir);
      return FailLauncher(endpoints.status());
    }
    backend_options.etcd_endpoints = *endpoints;
  }
  backend_options.local_etcd_dir =
      (std::filesystem::path(data_dir) / "etcd").string();
  backend_options.etcd_prefix = StorePrefix();
  backend_options.cache_dir =
      (std::filesystem::path(data_dir) / "cache-launcher").string();
  absl::StatusOr<std::unique_ptr<SharedStoreBackend>> backend =
      SharedStoreBackend::Start(backend_options);
  if (!backend.ok()) {
    if (own_dir) std::filesystem::remove_all(data_dir);
    return FailLauncher(backend.status());
  }
  const std::string endpoints =
      absl::StrJoin((*backend)->etcd_endpoints(), ",");
  if (!json) {
    std::cout << "etcd: "
              << ((*backend)->started_local_etcd() ? "a local "
                                                     "cluster"
                                                   : "members")
              << " at " << endpoints << "; data directory " << data_dir
              << "\nscenario " << (spec->name.empty() ? "default" : spec->name)
              << ": " << BackfillKindName(spec->job.backfill_kind)
              << " backfill, " << spec->job.initial_rows << " initial rows"
              << std::endl;
  }
  // One run's processes share its id: its done key is theirs alone.
  const std::string run_id =
      absl::StrCat(getpid(), "-", absl::ToUnixMicros(absl::Now()));
  const std::vector<std::string> common = {
      absl::StrCat("--data_dir=", data_dir),
      absl::StrCat("--etcd_endpoints=", endpoints),
      absl::StrCat("--etcd_prefix=", StorePrefix()),
      absl::StrCat("--object_store=", ObjectStoreOf(data_dir)),
      absl::StrCat("--listen_host=", absl::GetFlag(FLAGS_listen_host)),
      absl::StrCat("--scenario=", absl::GetFlag(FLAGS_scenario)),
      absl::StrCat("--workers=", num_workers),
      absl::StrCat("--parallelism=", absl::GetFlag(FLAGS_parallelism)),
      absl::StrCat("--lease_seconds=", absl::GetFlag(FLAGS_lease_seconds)),
      absl::StrCat("--barrier_timeout_seconds=",
                   absl::GetFlag(FLAGS_barrier_timeout_seconds)),
      absl::StrCat("--run_id=", run_id),
      absl::StrCat("--dump_dir=", absl::GetFlag(FLAGS_dump_dir).empty()
                                      ? std::string()
                                      : std::filesystem::absolute(
                                            absl::GetFlag(FLAGS_dump_dir))
                                            .string())};

  Events events;
  std::vector<std::unique_ptr<Child>> children;
  auto say = [json](const std::string& line) {
    if (!json) std::cout << line << std::endl;
  };
  auto start = [&](bool coordinator, uint32_t index) -> absl::Status {
    std::vector<std::string> args = common;
    args.push_back(coordinator ? "--role=coordinator" : "--role=worker");
    args.push_back(absl::StrCat(
        coordinator ? "--coordinator_index=" : "--worker_index=", index));
    if (!coordinator && faults.hang_worker_actors_after > 0) {
      args.push_back("--hang_actors_on_sigusr1");
    }
    absl::StatusOr<Spawned> spawned = Spawn(args);
    if (!spawned.ok()) return spawned.status();
    auto child = std::make_unique<Child>();
    child->name = absl::StrCat(coordinator ? "coordinator " : "worker ", index);
    child->coordinator = coordinator;
    child->index = index;
    child->pid = spawned->pid;
    child->out = spawned->out;
    child->err = spawned->err;
    const size_t id = children.size();
    child->reader = std::thread([&events, id, out = spawned->out] {
      while (std::optional<std::string> line = ReadLine(out)) {
        events.Push({id, std::move(line)});
      }
      events.Push({id, std::nullopt});
    });
    child->err_reader = std::thread([c = child.get()] {
      while (std::optional<std::string> line = ReadLine(c->err)) {
        std::cerr << (*line + "\n");
        if (std::string error = ErrorOfLine(*line); !error.empty()) {
          c->last_error = std::move(error);
        }
      }
    });
    children.push_back(std::move(child));
    return absl::OkStatus();
  };
  auto find = [&](bool coordinator, uint32_t index) -> Child* {
    for (const std::unique_ptr<Child>& child : children) {
      if (child->coordinator == coordinator && child->index == index) {
        return child.get();
      }
    }
    return nullptr;
  };
  auto running_coordinators = [&] {
    int count = 0;
    for (const std::unique_ptr<Child>& child : children) {
      if (child->coordinator && child->pid > 0) ++count;
    }
    return count;
  };

  Tally tally;
  std::map<std::string, std::string> result;
  Child* result_from = nullptr;
  Child* leader = nullptr;
  Child* paused = nullptr;
  absl::Time resume_at = absl::InfiniteFuture();
  uint32_t next_worker = 0;  // Workers start one at a time, in index order.
  uint32_t total_workers = num_workers;
  std::string error;
  // "coordinator N exited with code C: STATUS" of the last coordinator that
  // printed an error: the run's error if no coordinator ends with a result.
  std::string last_coordinator_error;
  uint64_t epochs = 0;
  // The first epoch since the view's creation at which a coordinator said
  // the backfill had finished (0: not yet).
  uint64_t backfill_done_at = 0;
  // The highest committed epoch any coordinator reported: it never goes
  // back, across failovers too.
  uint64_t committed = 0;
  auto check_committed = [&](const Child& child, const std::string& line,
                             const std::string& key) {
    const std::optional<uint64_t> reported = NumberAfter(line, key);
    if (!reported.has_value()) return;
    const uint64_t value = *reported;
    if (value < committed) {
      error = absl::StrCat("the committed epoch went back: ", child.name,
                           " reported ", value, " after ", committed);
    }
    committed = std::max(committed, value);
  };
  // Said after each injected fault: whether it came after the backfill.
  auto injected = [&] {
    if (backfill_done_at == 0) return;
    ++tally.faults_after_backfill;
    say(absl::StrCat("  the backfill had finished at epoch ", backfill_done_at,
                     ", before this fault: a recovery may find little or no "
                     "snapshot to read again, and the job may end before it "
                     "needs one"));
  };
  // The injected faults, each once the job passed its epoch.
  auto inject = [&] {
    if (faults.kill_worker_after > 0 && tally.workers_killed == 0 &&
        epochs >= faults.kill_worker_after) {
      Child* victim = find(false, 0);
      if (victim != nullptr && victim->pid > 0) {
        say(absl::StrCat("killing worker 0 (pid ", victim->pid,
                         ") after epoch ", epochs, " (committed ", committed,
                         ")"));
        victim->killed = true;
        Reap(*victim, SIGKILL);
        tally.workers_killed = 1;
        injected();
      }
    }
    if (faults.kill_coordinator_after > 0 && tally.coordinators_killed == 0 &&
        epochs >= faults.kill_coordinator_after && leader != nullptr &&
        leader->pid > 0) {
      say(absl::StrCat("killing the leader, ", leader->name, " (pid ",
                       leader->pid, ") after epoch ", epochs, " (committed ",
                       committed, ")"));
      leader->killed = true;
      Reap(*leader, SIGKILL);
      tally.coordinators_killed = 1;
      injected();
    }
    if (faults.kill_etcd_leader_after > 0 && tally.etcd_leaders_killed == 0 &&
        epochs >= faults.kill_etcd_leader_after) {
      EtcdTestCluster* etcd = (*backend)->local_etcd();
      absl::StatusOr<int> member =
          etcd == nullptr ? absl::StatusOr<int>(absl::FailedPreconditionError(
                                "no local etcd cluster"))
                          : etcd->LeaderIndex(absl::Seconds(10));
      absl::Status killed =
          member.ok() ? etcd->KillMember(*member) : member.status();
      if (!killed.ok()) {
        error = absl::StrCat("killing the etcd leader: ", killed.ToString());
      } else {
        say(absl::StrCat("killed etcd member ", *member, " (the raft leader, ",
                         etcd->Endpoint(*member), ") after epoch ", epochs));
        injected();
      }
      tally.etcd_leaders_killed = 1;
    }
    if (faults.pause_worker_after > 0 && tally.workers_paused == 0 &&
        epochs >= faults.pause_worker_after) {
      Child* victim = find(false, num_workers - 1);
      if (victim != nullptr && victim->pid > 0) {
        say(absl::StrCat("pausing ", victim->name, " (pid ", victim->pid,
                         ", SIGSTOP) for ", absl::FormatDuration(faults.pause),
                         " after epoch ", epochs));
        kill(victim->pid, SIGSTOP);
        victim->paused = true;
        paused = victim;
        resume_at = absl::Now() + faults.pause;
        tally.workers_paused = 1;
        injected();
      }
    }
    if (faults.hang_worker_actors_after > 0 && tally.workers_hung == 0 &&
        epochs >= faults.hang_worker_actors_after) {
      Child* victim = find(false, num_workers - 1);
      if (victim != nullptr && victim->pid > 0) {
        say(absl::StrCat("hanging the actors of ", victim->name, " (pid ",
                         victim->pid, ", SIGUSR1) after epoch ", epochs));
        kill(victim->pid, SIGUSR1);
        tally.workers_hung = 1;
        injected();
      }
    }
    if (faults.add_worker_after > 0 && tally.workers_added == 0 &&
        epochs >= faults.add_worker_after && next_worker >= total_workers) {
      say(absl::StrCat("adding worker ", total_workers, " after epoch ",
                       epochs));
      ++total_workers;
      tally.workers_added = 1;
      if (absl::Status started = start(false, next_worker++); !started.ok()) {
        error = started.ToString();
      }
    }
  };

  if (absl::Status started = start(true, 0); !started.ok()) {
    error = started.ToString();
  }
  while (error.empty() && !g_interrupted.load()) {
    if (result_from != nullptr && result_from->pid <= 0) break;
    std::optional<Event> event =
        events.Pop(std::min(resume_at, absl::Now() + absl::Seconds(1)));
    if (paused != nullptr && absl::Now() >= resume_at) {
      say(absl::StrCat("resuming ", paused->name, " (SIGCONT)"));
      if (paused->pid > 0) kill(paused->pid, SIGCONT);
      paused->paused = false;
      paused = nullptr;
      resume_at = absl::InfiniteFuture();
    }
    if (!event.has_value()) continue;
    Child& child = *children[event->child];
    if (!event->line.has_value()) {  // Its stdout ended: it exited.
      const bool was_killed = child.killed;
      StopChild(child, 0);
      if (was_killed) continue;
      if (&child == result_from) break;
      if (child.coordinator) {
        say(absl::StrCat(child.name, " exited (code ", child.exit_code, ")"));
        if (!child.last_error.empty()) {
          last_coordinator_error =
              absl::StrCat(child.name, " exited with code ", child.exit_code,
                           ": ", child.last_error);
        }
        if (running_coordinators() == 0 && result.empty()) {
          // The cause, not only the fact: the last error a coordinator
          // printed (a standby's is usually about its leader's).
          error = "every coordinator ended without a result";
          if (!last_coordinator_error.empty()) {
            absl::StrAppend(&error, ": ", last_coordinator_error);
          } else {
            absl::StrAppend(&error, ": ", child.name, " exited with code ",
                            child.exit_code);
          }
        }
      } else if (!child.ready) {
        error = absl::StrCat(child.name, " ended before it was ready (code ",
                             child.exit_code, ")");
        if (!child.last_error.empty()) {
          absl::StrAppend(&error, ": ", child.last_error);
        }
      } else {
        say(absl::StrCat(child.name, " exited (code ", child.exit_code, ")"));
      }
      continue;
    }
    const std::string& line = *event->line;
    if (absl::StartsWith(line, "READY ")) {
      child.ready = true;
      say(absl::StrCat(child.name, ": pid ", child.pid, ", ",
                       absl::StripPrefix(line, "READY ")));
      // Then the standby (once the first coordinator leads), then the
      // workers, each once the one before is ready.
      const bool next =
          child.coordinator ? child.index == 1 : next_worker < num_workers;
      if (next && next_worker < num_workers) {
        if (absl::Status started = start(false, next_worker++); !started.ok()) {
          error = started.ToString();
        }
      }
    } else if (absl::StartsWith(line, "LEADING ")) {
      ++tally.takeovers;
      leader = &child;
      check_committed(child, line, "committed_epoch");
      if (tally.takeovers == 1) {
        say(absl::StrCat(child.name, " leads"));
        absl::Status started =
            standby ? start(true, 1) : start(false, next_worker++);
        if (!started.ok()) error = started.ToString();
      } else {
        say(absl::StrCat(child.name, " took over (failover ",
                         tally.takeovers - 1, "): ", line));
      }
    } else if (absl::StartsWith(line, "EPOCH ")) {
      const uint64_t epoch = NumberAfter(line, "EPOCH").value_or(0);
      epochs =
          std::max(epochs, NumberAfter(line, "since_creation").value_or(epoch));
      if (backfill_done_at == 0 &&
          NumberAfter(line, "backfill_done").value_or(0) == 1) {
        backfill_done_at = epochs;
      }
      check_committed(child, line, "committed");
      inject();
      if (epoch % 20 == 0) say(absl::StrCat(child.name, ": ", line));
    } else if (absl::StartsWith(line, "RESULT ")) {
      result = ParseResult(line);
      result_from = &child;
    } else if (absl::StartsWith(line, "RECOVERY ")) {
      ++tally.recoveries;
      say(absl::StrCat(child.name, ": ", line));
    } else if (absl::StartsWith(line, "RESCHEDULE ")) {
      ++tally.reschedules;
      say(absl::StrCat(child.name, ": ", line));
    } else if (absl::StartsWith(line, "FENCED ")) {
      // A leader's names the worker ("FENCED worker-2 why"); a worker's is
      // its own.
      const std::string named = line.substr(7);
      const std::string worker = child.coordinator
                                     ? named.substr(0, named.find(' '))
                                     : absl::StrCat("worker-", child.index);
      // A leader that resumes a job fences the workers its saved state
      // names whose leases are gone: an earlier run's, when this run has
      // no worker of that name that has registered. Not this run's fault.
      uint32_t index = 0;
      const Child* ours =
          absl::SimpleAtoi(absl::StripPrefix(worker, "worker-"), &index)
              ? find(false, index)
              : nullptr;
      if (ours == nullptr || !ours->ready) {
        say(absl::StrCat(child.name, ": ", line,
                         " (an earlier run's worker: not counted)"));
        continue;
      }
      tally.fenced_workers.insert(worker);
      say(absl::StrCat(child.name, ": ", line));
    } else {
      say(absl::StrCat(child.name, ": ", line));
    }
  }
  // The workers and the standby end once the run's done key is written;
  // whatever is left is stopped.
  for (std::unique_ptr<Child>& child : children) {
    if (child->pid > 0 && !g_interrupted.load() && error.empty()) {
      const absl::Time deadline = absl::Now() + absl::Seconds(5);
      while (child->pid > 0 && absl::Now() < deadline) {
        int status = 0;
        const pid_t done = waitpid(child->pid, &status, WNOHANG);
        if (done == child->pid) {
          ForgetChild(child->pid);
          child->pid = -1;
        } else {
          absl::SleepFor(absl::Milliseconds(20));
        }
      }
    }
    StopChild(*child, SIGKILL);
  }
  (*backend)->StopLocalEtcd();
  if (own_dir) std::filesystem::remove_all(data_dir);
  if (g_interrupted.load()) {
    std::cerr << "backfill_cluster: interrupted; every process it started "
                 "was stopped\n";
    // Resumable where the versions and the files outlive the run: etcd
    // given, and a data directory (the object store's) that is not ours.
    const bool external_etcd = !absl::GetFlag(FLAGS_etcd_endpoints).empty();
    std::cerr << (external_etcd && !own_dir
                      ? "backfill_cluster: rerun the same command (the same "
                        "--etcd_endpoints, --etcd_prefix and --data_dir) to "
                        "resume the job\n"
                      : absl::StrCat(
                            "backfill_cluster: the run cannot be resumed: ",
                            external_etcd ? "its data directory was temporary"
                                          : "its versions were in the local "
                                            "etcd cluster, stopped with it",
                            " (resumable: --etcd_endpoints and --data_dir)\n"));
    std::cout << ResultJson(total_workers, tally, {},
                            "CANCELLED: interrupted (Ctrl-C)")
              << std::endl;
    return 130;
  }
  if (!error.empty()) std::cerr << "backfill_cluster: error: " << error << "\n";
  // A field of the coordinator's RESULT line; "0" when there is none.
  auto field = [&result](const std::string& key) {
    auto it = result.find(key);
    return it == result.end() || it->second.empty() ? std::string("0")
                                                    : it->second;
  };
  const bool consistent = field("consistent") == "1";
  int exit_code = result_from == nullptr ? 2 : result_from->exit_code;
  if (result.empty() && error.empty()) {
    error = "no coordinator ended with a result (their errors are above)";
  }
  const uint32_t failovers = tally.takeovers > 0 ? tally.takeovers - 1 : 0;
  if (!json) {
    std::cout << (result.empty()
                      ? absl::StrCat("no result: ", error)
                      : absl::StrCat(consistent ? "consistent" : "INCONSISTENT",
                                     ": ", field("view_rows"), " view rows, ",
                                     tally.recoveries, " recoveries, ",
                                     failovers, " coordinator failovers, ",
                                     field("seconds"), " s, ",
                                     field("snapshot_rows_per_second"),
                                     " snapshot rows/s"))
              << "; workers " << total_workers << ", killed "
              << tally.workers_killed
              << (tally.faults_after_backfill > 0
                      ? absl::StrCat("; ", tally.faults_after_backfill,
                                     " fault(s) after the backfill finished")
                      : "")
              << std::endl;
  }
  std::cout << ResultJson(total_workers, tally, result, error) << std::endl;

  if (result.empty() && exit_code < 2) exit_code = 2;
  if (exit_code == 0 && !consistent) exit_code = 1;
  return exit_code;
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) {
  backfill::CommandFlagsConfig config;
  config.program = "backfill_cluster";
  config.usage =
      "backfill_cluster [flags]: one backfill job over a coordinator, a "
      "standby coordinator\nand --workers worker processes on this machine (a "
      "local 3-member etcd cluster,\na local object store), optionally with "
      "faults injected; the last line of\nstandard output is JSON with the "
      "verdict (docs/cluster.md). Exit codes: 0\nconsistent, 1 inconsistent, 2 "
      "error (bad flags included), 130 Ctrl-C.";
  config.help_files = {"tools/backfill_cluster_main.cc"};
  const absl::StatusOr<backfill::CommandLine> line =
      backfill::ParseCommandFlags(argc, argv, config, std::cout);
  if (!line.ok()) return backfill::FailLauncher(line.status());
  if (line->help_shown) return 0;
  if (!line->positional.empty()) {
    return backfill::FailLauncher(absl::InvalidArgumentError(absl::StrCat(
        "unexpected argument \"", line->positional[0],
        "\" (flags are --name=value; backfill_cluster --help lists them)")));
  }
  const std::string prefix = absl::GetFlag(FLAGS_etcd_prefix);
  if (prefix.size() < 2 || prefix.back() != '/') {
    return backfill::FailLauncher(absl::InvalidArgumentError(absl::StrCat(
        "--etcd_prefix=", prefix,
        ": expected a key prefix of at least one character and a final '/', "
        "e.g. backfill_cluster/orders/")));
  }
  const std::string role = absl::GetFlag(FLAGS_role);
  if (role == "coordinator") {
    return backfill::RunCoordinator(absl::GetFlag(FLAGS_data_dir));
  }
  if (role == "worker")
    return backfill::RunWorker(absl::GetFlag(FLAGS_data_dir));
  if (!role.empty()) {
    return backfill::FailLauncher(absl::InvalidArgumentError(
        absl::StrCat("--role=", role,
                     ": expected coordinator, worker, or empty for the "
                     "launcher")));
  }
  return backfill::RunLauncher();
}
