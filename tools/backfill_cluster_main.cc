// backfill_cluster: one backfill job over several processes on this machine
// (issue 19): a 3-member etcd cluster on free local ports, a local-directory
// object store, one coordinator process (the source, the view and the job's
// coordinator; it commits the checkpoints) and N worker processes (the
// backfill actors, each worker with its own store object of the shared
// store), which talk only over gRPC. The verdict is the runtime's: the view
// read back and compared with the table through the store's committed
// iterator. `--kill_worker_after_epochs=N` SIGKILLs worker 0 (it runs
// backfill actor 100) once the job passed N epochs; the coordinator
// recovers from the last checkpoint with its actors on the workers left.
//
//   bazel run -c opt //tools:backfill_cluster -- --workers=3
//       --kill_worker_after_epochs=10 --json
//
// The same binary is each process (--role=coordinator / --role=worker,
// started by the launcher; not for direct use). Everything it started is
// stopped on every way out, Ctrl-C included. docs/cluster.md describes the
// processes, their ports and their limits.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "executor/cluster/actor_worker.h"
#include "executor/cluster/checkpoint_coordinator.h"
#include "executor/cluster/checkpoint_worker.h"
#include "executor/cluster/cluster_checkpoint_store.h"
#include "executor/cluster/cluster_placement.h"
#include "executor/cluster/remote_exchange.h"
#include "executor/runtime/barrier_coordinator.h"
#include "executor/runtime/streaming_job.h"
#include "executor/runtime/threaded_driver.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/shared_store_backend.h"
#include "third_party/absl_extras/clock.h"
#include "tools/scenario.h"

ABSL_FLAG(uint32_t, workers, 3, "worker processes (>= 1)");
ABSL_FLAG(std::string, scenario, "",
          "scenario file (tools/scenarios/); empty: the default scenario");
ABSL_FLAG(uint32_t, parallelism, 0,
          "backfill actors (0: the scenario's), spread over the workers");
ABSL_FLAG(uint32_t, kill_worker_after_epochs, 0,
          "SIGKILL worker 0 (it runs backfill actor 100) once the job passed "
          "this many epochs (0: never)");
ABSL_FLAG(bool, json, false, "print one JSON object as the last line");
ABSL_FLAG(std::string, data_dir, "",
          "directory for the object store, caches and etcd (default: a new "
          "one under $TMPDIR, removed at the end)");
ABSL_FLAG(std::string, object_store, "",
          "the shared object store: DIR or s3://BUCKET[/PREFIX] (default: "
          "DATA_DIR/objects); every process must see the same one");
ABSL_FLAG(std::string, listen_host, "127.0.0.1",
          "the host every service of the processes listens on (ports are "
          "chosen at start)");
ABSL_FLAG(std::string, role, "",
          "coordinator or worker: one process of the job, as the launcher "
          "starts it (docs/cluster.md); empty: the launcher");
ABSL_FLAG(std::string, etcd_endpoints, "",
          "etcd members HOST:PORT,... (launcher: empty starts a local "
          "3-member cluster)");
ABSL_FLAG(std::string, coordinator_address, "", "internal: worker role");
ABSL_FLAG(uint32_t, worker_index, 0, "internal: worker role");

namespace backfill {
namespace {

constexpr char kPrefix[] = "backfill_cluster/";

// ---- Shared by the roles.

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
  options.etcd_prefix = kPrefix;
  options.cache_dir = (std::filesystem::path(data_dir) / cache).string();
  return SharedStoreBackend::Start(options);
}

// One line on stdout, at once (the launcher reads the children's).
void Say(const std::string& line) { std::cout << line << std::endl; }

int Fail(const std::string& role, const absl::Status& status) {
  std::cerr << "backfill_cluster " << role << ": error: " << status << "\n";
  return 2;
}

// ---- The coordinator process.

int RunCoordinator(const std::string& data_dir) {
  absl::StatusOr<ScenarioSpec> spec = LoadSpec();
  if (!spec.ok()) return Fail("coordinator", spec.status());
  absl::StatusOr<std::unique_ptr<SharedStoreBackend>> backend =
      OpenBackend(data_dir, "cache-coordinator");
  if (!backend.ok()) return Fail("coordinator", backend.status());
  absl::StatusOr<std::unique_ptr<SharedStateStore>> committer =
      SharedStateStore::Open((*backend)->store_options());
  if (!committer.ok()) return Fail("coordinator", committer.status());
  CheckpointCoordinatorOptions checkpoint_options;
  checkpoint_options.store = committer->get();
  checkpoint_options.commit_own_data = true;
  checkpoint_options.listen_address = ListenAddress();
  absl::StatusOr<std::unique_ptr<CheckpointCoordinator>> checkpoints =
      CheckpointCoordinator::Start(checkpoint_options);
  if (!checkpoints.ok()) return Fail("coordinator", checkpoints.status());
  absl::StatusOr<std::unique_ptr<ExchangeServer>> exchange =
      ExchangeServer::Start({.listen_address = ListenAddress()});
  if (!exchange.ok()) return Fail("coordinator", exchange.status());
  Say(absl::StrCat("READY ", (*checkpoints)->address()));
  const uint32_t workers = absl::GetFlag(FLAGS_workers);
  if (absl::Status joined =
          (*checkpoints)
              ->WaitForWorkers(workers, absl::Now() + absl::Seconds(120));
      !joined.ok()) {
    return Fail("coordinator", joined);
  }
  ClusterCheckpointStore store(**committer, **checkpoints);
  StreamingJobOptions options = spec->job;
  if (const uint32_t parallelism = absl::GetFlag(FLAGS_parallelism);
      parallelism > 0) {
    options.parallelism = parallelism;
  }
  options.on_recovery = [](const absl::Status& error, uint32_t recovery) {
    Say(absl::StrCat("RECOVERY ", recovery, " ", error.ToString()));
  };
  uint64_t attempt = 0;
  PlacementFactory placement =
      [&]() -> absl::StatusOr<std::unique_ptr<AttemptPlacement>> {
    std::vector<WorkerEndpoint> live;
    for (const CheckpointCoordinator::LiveWorker& worker :
         (*checkpoints)->LiveWorkerEndpoints()) {
      auto actor = worker.endpoints.find("actor");
      auto exchange_address = worker.endpoints.find("exchange");
      if (actor == worker.endpoints.end() ||
          exchange_address == worker.endpoints.end()) {
        continue;
      }
      live.push_back({worker.session, actor->second, exchange_address->second});
    }
    Say(absl::StrCat("ATTEMPT ", attempt + 1, " workers ", live.size()));
    return std::make_unique<ClusterPlacement>(**exchange, **committer, store,
                                              std::move(live), ++attempt);
  };
  auto observer = [](const JobProgress& progress) {
    Say(absl::StrCat("EPOCH ", progress.epochs, " checkpoints ",
                     progress.checkpoints, " snapshot_rows ",
                     progress.snapshot_rows));
  };
  absl::StatusOr<JobResult> result = RunStreamingJobWithDriver(
      store, options, nullptr, observer, Clock::Real(),
      [&](JobGraph& graph, BarrierCoordinator& coordinator) {
        return RunThreaded(graph, coordinator, options.barrier_interval,
                           Clock::Real());
      },
      placement);
  (*checkpoints)->Shutdown();
  if (!result.ok()) return Fail("coordinator", result.status());
  Say(absl::StrCat("RESULT consistent ", result->consistent ? 1 : 0,
                   " upstream_rows ", result->upstream_rows, " view_rows ",
                   result->view_rows, " snapshot_rows ", result->snapshot_rows,
                   " recoveries ", result->recoveries, " epochs ",
                   result->epochs, " seconds ", result->seconds,
                   " snapshot_rows_per_second ",
                   result->snapshot_rows_per_second));
  if (!result->consistent) {
    std::cerr << "backfill_cluster coordinator: INCONSISTENT: "
              << result->mismatch << "\n";
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
  absl::StatusOr<std::unique_ptr<SharedStateStore>> store =
      SharedStateStore::Open((*backend)->store_options());
  if (!store.ok()) return Fail(role, store.status());
  const StreamingJobOptions options = spec->job;
  absl::StatusOr<std::unique_ptr<ActorWorker>> actors =
      ActorWorker::Start({.listen_address = ListenAddress(),
                          .exchange_listen_address = ListenAddress(),
                          .store = store->get(),
                          .shared_store = store->get(),
                          .options = &options});
  if (!actors.ok()) return Fail(role, actors.status());
  CheckpointWorkerOptions checkpoint_options;
  checkpoint_options.coordinator_address =
      absl::GetFlag(FLAGS_coordinator_address);
  checkpoint_options.worker_id = absl::StrCat("worker-", index);
  checkpoint_options.store = store->get();
  checkpoint_options.endpoints = {{"actor", (*actors)->address()},
                                  {"exchange", (*actors)->exchange_address()}};
  absl::StatusOr<std::unique_ptr<CheckpointWorker>> checkpoints =
      CheckpointWorker::Connect(checkpoint_options);
  if (!checkpoints.ok()) return Fail(role, checkpoints.status());
  Say(absl::StrCat("READY ", (*actors)->address()));
  // Until the coordinator ends the stream (the job is over) or this
  // process is killed.
  const absl::Status ended =
      (*checkpoints)->WaitUntilEnded(absl::InfiniteFuture());
  (*actors)->Shutdown();
  (void)ended;
  return 0;
}

// ---- The launcher.

struct Child {
  pid_t pid = -1;
  FILE* out = nullptr;  // its stdout
  std::string name;
};

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

// Starts this binary with `args`; its stdout is readable from Child::out.
absl::StatusOr<Child> Spawn(const std::string& name,
                            const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) {
    return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  }
  if (g_interrupted.load()) return absl::CancelledError("interrupted");
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
    close(pipe_fds[0]);
    close(pipe_fds[1]);
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
    return absl::ResourceExhaustedError("too many child processes");
  }
  return Child{pid, fdopen(pipe_fds[0], "r"), name};
}

// The next line of a child's stdout; nullopt at its end.
std::optional<std::string> ReadLine(Child& child) {
  char* line = nullptr;
  size_t capacity = 0;
  const ssize_t length = getline(&line, &capacity, child.out);
  if (length < 0) {
    free(line);
    return std::nullopt;
  }
  std::string text(line, static_cast<size_t>(length));
  free(line);
  return std::string(absl::StripTrailingAsciiWhitespace(text));
}

// Waits for the child's "READY <address>" line.
absl::StatusOr<std::string> WaitReady(Child& child) {
  while (std::optional<std::string> line = ReadLine(child)) {
    if (absl::StartsWith(*line, "READY ")) {
      return std::string(absl::StripPrefix(*line, "READY "));
    }
  }
  return absl::UnavailableError(
      absl::StrCat(child.name, " ended before it was ready"));
}

void StopChild(Child& child, int signal) {
  if (child.pid <= 0) return;
  kill(child.pid, signal);
  int status = 0;
  waitpid(child.pid, &status, 0);
  ForgetChild(child.pid);
  child.pid = -1;
  if (child.out != nullptr) {
    fclose(child.out);
    child.out = nullptr;
  }
}

std::map<std::string, std::string> ParseResult(const std::string& line) {
  std::map<std::string, std::string> fields;
  std::vector<std::string> words = absl::StrSplit(line, ' ');
  for (size_t i = 1; i + 1 < words.size(); i += 2) {
    fields[words[i]] = words[i + 1];
  }
  return fields;
}

int RunLauncher() {
  const uint32_t num_workers = absl::GetFlag(FLAGS_workers);
  const bool json = absl::GetFlag(FLAGS_json);
  if (num_workers < 1) {
    std::cerr << "backfill_cluster: error: --workers must be >= 1\n";
    return 2;
  }
  absl::StatusOr<ScenarioSpec> spec = LoadSpec();
  if (!spec.ok()) {
    std::cerr << "backfill_cluster: error: " << spec.status() << "\n";
    return 2;
  }
  // Refused before anything starts: the runtime would refuse it at the
  // action's epoch, and every recovery again.
  for (const JobAction& action : spec->job.actions) {
    if (action.kind == JobAction::Kind::kRescale) {
      std::cerr << "backfill_cluster: error: INVALID_ARGUMENT: the scenario "
                   "rescales online ("
                << JobActionDebugString(action)
                << "); a job split over processes is not rescaled online "
                   "(run it with //tools:backfill)\n";
      return 2;
    }
  }
  std::string data_dir = absl::GetFlag(FLAGS_data_dir);
  const bool own_dir = data_dir.empty();
  if (own_dir) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "backfill_cluster.XXXXXX")
            .string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::cerr << "backfill_cluster: error: mkdtemp: " << std::strerror(errno)
                << "\n";
      return 2;
    }
    data_dir = pattern;
  }
  std::filesystem::create_directories(data_dir);
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
      std::cerr << "backfill_cluster: error: " << endpoints.status() << "\n";
      return 2;
    }
    backend_options.etcd_endpoints = *endpoints;
  }
  backend_options.local_etcd_dir =
      (std::filesystem::path(data_dir) / "etcd").string();
  backend_options.etcd_prefix = kPrefix;
  backend_options.cache_dir =
      (std::filesystem::path(data_dir) / "cache-launcher").string();
  absl::StatusOr<std::unique_ptr<SharedStoreBackend>> backend =
      SharedStoreBackend::Start(backend_options);
  if (!backend.ok()) {
    std::cerr << "backfill_cluster: error: " << backend.status() << "\n";
    return 2;
  }
  const std::string endpoints =
      absl::StrJoin((*backend)->etcd_endpoints(), ",");
  if (!json) {
    std::cout << "etcd: "
              << ((*backend)->started_local_etcd() ? "a local "
                                                     "cluster"
                                                   : "members")
              << " at " << endpoints << "; data directory " << data_dir
              << std::endl;
  }
  const std::vector<std::string> common = {
      absl::StrCat("--data_dir=", data_dir),
      absl::StrCat("--etcd_endpoints=", endpoints),
      absl::StrCat("--object_store=", ObjectStoreOf(data_dir)),
      absl::StrCat("--listen_host=", absl::GetFlag(FLAGS_listen_host)),
      absl::StrCat("--scenario=", absl::GetFlag(FLAGS_scenario)),
      absl::StrCat("--workers=", num_workers),
      absl::StrCat("--parallelism=", absl::GetFlag(FLAGS_parallelism))};

  int exit_code = 2;
  std::vector<Child> workers;
  Child coordinator;
  uint32_t killed = 0;
  std::map<std::string, std::string> result;
  std::string error;
  [&] {
    std::vector<std::string> args = common;
    args.push_back("--role=coordinator");
    absl::StatusOr<Child> started = Spawn("coordinator", args);
    if (!started.ok()) {
      error = started.status().ToString();
      return;
    }
    coordinator = *started;
    absl::StatusOr<std::string> address = WaitReady(coordinator);
    if (!address.ok()) {
      error = address.status().ToString();
      return;
    }
    if (!json) std::cout << "coordinator: " << *address << std::endl;
    for (uint32_t i = 0; i < num_workers; ++i) {
      std::vector<std::string> worker_args = common;
      worker_args.push_back("--role=worker");
      worker_args.push_back(absl::StrCat("--worker_index=", i));
      worker_args.push_back(absl::StrCat("--coordinator_address=", *address));
      absl::StatusOr<Child> worker =
          Spawn(absl::StrCat("worker ", i), worker_args);
      if (!worker.ok()) {
        error = worker.status().ToString();
        return;
      }
      workers.push_back(*worker);
      absl::StatusOr<std::string> ready = WaitReady(workers.back());
      if (!ready.ok()) {
        error = ready.status().ToString();
        return;
      }
      if (!json) {
        std::cout << "worker " << i << ": pid " << worker->pid << ", " << *ready
                  << std::endl;
      }
    }
    const uint32_t kill_after = absl::GetFlag(FLAGS_kill_worker_after_epochs);
    while (std::optional<std::string> line = ReadLine(coordinator)) {
      if (absl::StartsWith(*line, "RESULT ")) {
        result = ParseResult(*line);
      } else if (absl::StartsWith(*line, "EPOCH ")) {
        uint64_t epochs = 0;
        std::vector<std::string> words = absl::StrSplit(*line, ' ');
        if (words.size() > 1 && absl::SimpleAtoi(words[1], &epochs) &&
            kill_after > 0 && killed == 0 && epochs >= kill_after) {
          // Worker 0 runs backfill actor 100 in every attempt.
          Child& victim = workers.front();
          if (!json) {
            std::cout << "killing worker 0 (pid " << victim.pid
                      << ") after epoch " << epochs << std::endl;
          }
          StopChild(victim, SIGKILL);
          killed = 1;
        }
        if (!json && epochs % 20 == 0) std::cout << *line << std::endl;
      } else if (!json) {
        std::cout << *line << std::endl;
      }
    }
    int status = 0;
    waitpid(coordinator.pid, &status, 0);
    ForgetChild(coordinator.pid);
    coordinator.pid = -1;
    exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
  }();
  // The workers end when the coordinator's streams do; whatever is left is
  // stopped.
  for (Child& worker : workers) StopChild(worker, SIGTERM);
  StopChild(coordinator, SIGKILL);
  (*backend)->StopLocalEtcd();
  if (own_dir) std::filesystem::remove_all(data_dir);
  if (g_interrupted.load()) {
    std::cerr << "backfill_cluster: interrupted; every process it started "
                 "was stopped\n";
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
  if (result.empty() && error.empty()) {
    error = absl::StrCat("the coordinator ended without a result (exit ",
                         exit_code, "; its error is above)");
  }
  if (!json) {
    std::cout << (result.empty()
                      ? absl::StrCat("no result: ", error)
                      : absl::StrCat(consistent ? "consistent" : "INCONSISTENT",
                                     ": ", field("view_rows"), " view rows, ",
                                     field("recoveries"), " recoveries, ",
                                     field("seconds"), " s, ",
                                     field("snapshot_rows_per_second"),
                                     " snapshot rows/s"))
              << "; workers " << num_workers << ", killed " << killed
              << std::endl;
  }
  std::cout << "{\"consistent\":" << (consistent ? "true" : "false")
            << ",\"workers\":" << num_workers
            << ",\"workers_killed\":" << killed
            << ",\"coordinator_failovers\":0"
            << ",\"recoveries\":" << field("recoveries")
            << ",\"upstream_rows\":" << field("upstream_rows")
            << ",\"view_rows\":" << field("view_rows")
            << ",\"snapshot_rows\":" << field("snapshot_rows")
            << ",\"seconds\":" << field("seconds")
            << ",\"snapshot_rows_per_second\":"
            << field("snapshot_rows_per_second");
  if (result.empty())
    std::cout << ",\"error\":\"" << absl::CEscape(error) << "\"";
  std::cout << "}" << std::endl;
  if (result.empty() && exit_code < 2) exit_code = 2;
  if (exit_code == 0 && !consistent) exit_code = 1;
  return exit_code;
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "one backfill job over a coordinator and --workers worker processes on "
      "this machine (a local 3-member etcd cluster, a local object store); "
      "the last line is JSON with the verdict");
  absl::ParseCommandLine(argc, argv);
  const std::string role = absl::GetFlag(FLAGS_role);
  if (role == "coordinator") {
    return backfill::RunCoordinator(absl::GetFlag(FLAGS_data_dir));
  }
  if (role == "worker")
    return backfill::RunWorker(absl::GetFlag(FLAGS_data_dir));
  if (!role.empty()) {
    std::cerr << "backfill_cluster: error: unknown --role '" << role << "'\n";
    return 2;
  }
  return backfill::RunLauncher();
}
