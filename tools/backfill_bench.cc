// bazel run -c opt //tools:backfill_bench -- [--rows=N] [--load=OPS] (--help)
//     [--growth_seconds=S] [--channel_rows=N] [--batch_interval_ms=MS]
//     [--json] [--plot=FILE.png] [--dir=DIR]
//
// Measures, in one process and one run, the arrangement backfill against the
// physical limit of this machine (a raw RocksDB scan of the same rows),
// against the upstream alone (its capacity, then its throughput and barrier
// latency at the load the loaded runs offer, half that capacity unless
// --load says otherwise), in adaptive rate-limit mode against that baseline,
// and against the two designs a team would otherwise write (stop-the-world,
// buffer-everything). Prints a table; with --json the last line is one JSON
// object (keys in tools/README.md). Every figure comes from this run: compare
// ratios, not absolute numbers, across machines.
//
// The upstream is the default scenario's orders table (INT64 pk, VARCHAR,
// FLOAT64, DECIMAL, TIMESTAMP, nullable INT32; 256 vnodes) in RocksDB, built
// once and copied for each run that needs a pristine store. The cost-growth
// runs (--child_snapshot) and the vnode-count runs (--child_job) are child
// processes of this binary so that their peak RSS is their own.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "executor/backfill/arrangement_backfill_executor.h"
#include "executor/backfill/arrangement_backfill_plan.h"
#include "executor/backfill/plan.pb.h"
#include "executor/backfill/progress_reporter.h"
#include "executor/channel.h"
#include "executor/runtime/demo/bulk_load.h"
#include "executor/runtime/demo/dml_source_executor.h"
#include "executor/runtime/demo/workload.h"
#include "executor/runtime/running_quantile.h"
#include "executor/runtime/streaming_job.h"
#include "ratelimit/rate_limit.h"
#include "rocksdb/write_batch.h"
#include "serde/memcmp_codec.h"
#include "serde/row.h"
#include "serde/schema.h"
#include "serde/value_codec.h"
#include "serde/vnode_bitmap.h"
#include "serde/vnode_hash.h"
#include "storage/rocksdb/raw_rocksdb_for_test.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "storage/state_table.h"
#include "storage/table_catalog.h"
#include "storage/table_key.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/absl_extras/mutex.h"
#include "third_party/absl_extras/status_macros.h"
#include "tools/command_flags.h"
#include "tools/progress_display.h"
#include "tools/scenario.h"
#include "tools/scenario_spec.h"

ABSL_FLAG(uint64_t, rows, 2'000'000,
          "Rows of the benchmark table (>= 1000); the vnode-count runs use "
          "N/4, the\ncost-growth runs N' and 4N' with N' >= N/4 (see "
          "--growth_seconds).");
ABSL_FLAG(std::optional<double>, load, std::nullopt,
          "Upstream ops/s of the loaded runs (mixed DML of the default "
          "scenario); unset:\nhalf the upstream's capacity, measured first.");
ABSL_FLAG(bool, json, false,
          "End standard output with one JSON object of every figure.");
ABSL_FLAG(std::string, plot, "",
          "If set, draws the loaded run's rates and barrier latency, and the "
          "adaptive run's\nrate limit and barrier latency, into this PNG with "
          "gnuplot (data beside it in\nFILE.png.dat and "
          "FILE.png.adaptive.dat).");
ABSL_FLAG(std::string, dir, "",
          "Working directory of the stores; empty: $TEST_TMPDIR/backfill_bench "
          "or\n/tmp/backfill_bench. Removed and recreated at start.");
ABSL_FLAG(std::optional<uint64_t>, channel_rows, std::nullopt,
          "Every job's StreamingJobOptions::channel_rows (the rows a channel "
          "buffers in\nchunks; 0: channels bounded by 16 messages of any "
          "size); unset: the default.");
ABSL_FLAG(std::optional<uint32_t>, batch_interval_ms, std::nullopt,
          "Every job's source batching (the scenario's "
          "workload.batch_interval_ms; 0:\neach change as soon as it is due); "
          "unset: the scenario default.");
ABSL_FLAG(
    uint32_t, speed_rounds, 9,
    "Rounds of the scan-speed figures: each round runs the raw scan with 1 "
    "and 2\nthreads and the snapshot with 1 and 2 actors back to back; "
    "each ratio is\nthe median of the rounds' ratios. The tombstone "
    "figures take as many rounds.");
ABSL_FLAG(bool, only_snapshot, false,
          "Stop after the snapshot runs (for perf record).");
ABSL_FLAG(bool, child_snapshot, false,
          "Internal: the child process of a cost-growth run (snapshot of "
          "--child_table\nin the store at --dir, one actor; prints "
          "\"seconds rows\").");
ABSL_FLAG(uint64_t, child_table, 0, "Internal: the table of --child_snapshot.");
ABSL_FLAG(uint64_t, child_progress_table, 900,
          "Internal: the progress table of --child_snapshot (a new one for "
          "each run over\nthe same store).");
ABSL_FLAG(bool, child_job, false,
          "Internal: the child process of a vnode-count run (the loaded job "
          "over the\n--rows rows of the store at --dir, --child_vnodes "
          "vnodes, --load ops/s;\nprints \"barrier_p99_ms peak_rss_kb\").");
ABSL_FLAG(uint32_t, child_vnodes, 256,
          "Internal: the vnode count of --child_job.");
ABSL_FLAG(double, growth_seconds, 2.5,
          "Cost-growth runs: the N run's rows are at least this many seconds "
          "of the\n1-actor snapshot rate measured earlier in the run (the 4N "
          "run takes 4x as\nmany); 0: N/4 and N of --rows.");

namespace backfill {
namespace {

struct Flags {
  uint64_t rows = 2'000'000;
  // Unset: half the measured upstream capacity.
  std::optional<double> load;
  bool json = false;
  std::string plot;
  std::string dir;
  // Child mode (cost growth): snapshot-backfill table `child_table` of the
  // store at `dir` with one actor, print "seconds rows".
  bool child_snapshot = false;
  uint64_t child_table = 0;
  uint64_t child_progress_table = 900;
  // Child mode (vnode count): the loaded job over `rows` rows of a table of
  // `child_vnodes` vnodes in the store at `dir`, print its backfill barrier
  // p99 and peak RSS.
  bool child_job = false;
  uint32_t child_vnodes = 256;
  // The cost-growth runs' length at the measured snapshot rate, seconds.
  double growth_seconds = 2.5;
  // Interleaved rounds of the scan-speed runs (raw and snapshot, 1 and 2).
  uint32_t speed_rounds = 9;
  // For profiling: build, then only the snapshot runs.
  bool only_snapshot = false;
};

[[noreturn]] void Die(const absl::Status& status, const char* what) {
  std::fprintf(stderr, "backfill_bench: %s: %s\n", what,
               status.ToString().c_str());
  std::exit(2);
}

template <typename T>
T OrDie(absl::StatusOr<T> value, const char* what) {
  if (!value.ok()) Die(value.status(), what);
  return *std::move(value);
}

void Check(const absl::Status& status, const char* what) {
  if (!status.ok()) Die(status, what);
}

// The median over `rounds` of one figure of each (`figure(round)`): the
// runtime's Percentile at 0.5 (for an even count, the upper middle value).
template <typename Round, typename Figure>
double MedianOver(const std::vector<Round>& rounds, Figure figure) {
  std::vector<double> values;
  values.reserve(rounds.size());
  for (const Round& round : rounds) values.push_back(figure(round));
  return Percentile(std::move(values), 0.5);
}

double SecondsSince(absl::Time start) {
  return absl::ToDoubleSeconds(absl::Now() - start);
}

// ---- The table
// ---------------------------------------------------------------------

// The default scenario's job with `rows` initial rows and no upstream load.
StreamingJobOptions BaseOptions(uint64_t rows) {
  ScenarioSpec spec =
      OrDie(ScenarioSpecFromProto(DefaultScenario()), "default scenario");
  StreamingJobOptions options = spec.job;
  options.initial_rows = rows;
  options.workload.ops_per_second = 0;
  options.actions.clear();
  options.max_duration = absl::Minutes(30);
  if (const auto rows = absl::GetFlag(FLAGS_channel_rows); rows.has_value()) {
    options.channel_rows = *rows;
  }
  if (const auto ms = absl::GetFlag(FLAGS_batch_interval_ms); ms.has_value()) {
    options.workload.batch_interval = absl::Milliseconds(*ms);
  }
  return options;
}

RocksDbStateStoreOptions StoreOptions(const std::string& path) {
  RocksDbStateStoreOptions options;  // The command's defaults.
  options.path = path;
  return options;
}

std::unique_ptr<RocksDbStateStore> OpenStore(const std::string& path) {
  return OrDie(RocksDbStateStore::Open(StoreOptions(path)), "open store");
}

void CopyStore(const std::string& from, const std::string& to) {
  std::filesystem::remove_all(to);
  std::filesystem::copy(from, to, std::filesystem::copy_options::recursive);
}

// Builds the table of `options` (its initial rows) in a new store at
// `path`, fully compacts it and closes it: a child process that opens it
// replays no write-ahead log, so its peak RSS holds no memtable of the load
// (a table smaller than the 64 MiB write buffer would otherwise be replayed
// whole into memory by the child, a bigger one only in part).
void BuildCompactedTable(const std::string& path,
                         const StreamingJobOptions& options) {
  auto store = OpenStore(path);
  OrDie(LoadInitialRows(*store, options), "load");
  Check(store->Compact(), "compact");
}

// The codec of `catalog`'s stored values (its value columns, positional).
std::unique_ptr<ValueRowCodec> ValueCodecOf(const TableCatalog& catalog) {
  Schema value_schema;
  for (int index : catalog.value_indices) {
    value_schema.push_back(catalog.columns[index]);
  }
  return OrDie(MakeValueRowCodec(ValueRowEncoding::kPositional, value_schema),
               "codec");
}

// ---- (a) The physical limit: a raw RocksDB iterator + value decode
// -----------------------------------------------

// Scans the table's rows in vnodes [first, end) with a raw iterator,
// decoding each value; returns how many.
uint64_t RawScanVnodes(raw_rocksdb_for_test::RawDb& raw,
                       const ValueRowCodec& codec, TableId table,
                       uint32_t first, uint32_t end) {
  // Every stored version starts with its table_id | vnode prefix.
  std::string from, to;
  AppendTableKeyPrefix(table, static_cast<VirtualNode>(first), &from);
  AppendTableKeyPrefix(table, static_cast<VirtualNode>(end), &to);
  rocksdb::ReadOptions read_options;
  read_options.fill_cache = false;
  std::unique_ptr<rocksdb::Iterator> it(
      raw.db->NewIterator(read_options, raw.data()));
  // Room for 64 values (2.5 KiB): tcmalloc gives a block that size whole
  // cache lines, where a 6-value row (240 bytes) lands next to the other
  // scan thread's and every value written moves a shared line between the
  // cores. That false sharing made the 2-thread scan's decode cost 2.5 times
  // the 1-thread scan's, and understated this machine's ceiling.
  Row row;
  row.reserve(64);
  uint64_t rows = 0;
  for (it->Seek(from); it->Valid(); it->Next()) {
    const rocksdb::Slice key = it->key();
    if (key.size() < to.size() ||
        std::memcmp(key.data(), to.data(), to.size()) >= 0) {
      break;
    }
    const rocksdb::Slice value = it->value();  // tag byte, then the row
    Check(codec.DecodeInto(
              absl::string_view(value.data() + 1, value.size() - 1), &row),
          "raw decode");
    ++rows;
  }
  if (!it->status().ok()) {
    Die(absl::InternalError(it->status().ToString()), "raw scan");
  }
  return rows;
}

// One timed pass of `threads` raw scans in parallel, each over an even
// share of the vnodes (as the backfill's actors split them); rows/s.
double RawScanRowsPerSecond(raw_rocksdb_for_test::RawDb& raw,
                            const ValueRowCodec& codec,
                            const TableCatalog& catalog, uint32_t threads,
                            uint64_t* rows_out) {
  const uint32_t vnodes = static_cast<uint32_t>(catalog.vnode_count);
  const absl::Time start = absl::Now();
  std::vector<uint64_t> rows(threads, 0);
  std::vector<std::thread> scans;
  for (uint32_t t = 0; t < threads; ++t) {
    scans.emplace_back([&, t] {
      rows[t] = RawScanVnodes(raw, codec, catalog.table_id,
                              vnodes * t / threads, vnodes * (t + 1) / threads);
    });
  }
  for (std::thread& scan : scans) scan.join();
  uint64_t total = 0;
  for (uint64_t r : rows) total += r;
  *rows_out = total;
  return total / SecondsSince(start);
}

// ---- (b) The backfill alone: N actors into counting sinks
// ----------------------------------------------------------

struct SnapshotRun {
  // From the creation barrier to the last snapshot row, and to the end (the
  // finish barrier, one barrier interval later at most, and the stop).
  double seconds = 0;
  double total_seconds = 0;
  uint64_t rows = 0;
  double rows_per_second() const { return seconds > 0 ? rows / seconds : 0; }
};

// Backfills `upstream` with `parallelism` actors whose output is only
// counted: no upstream changes, barriers every `interval`, a checkpoint at
// each (the progress table's). `progress_table_id` must be new to the store.
absl::StatusOr<SnapshotRun> RunSnapshotOnly(StateStore& store,
                                            const TableCatalog& upstream,
                                            uint32_t parallelism,
                                            TableId progress_table_id,
                                            absl::Duration interval) {
  Clock& clock = Clock::Real();
  BACKFILL_ASSIGN_OR_RETURN(
      std::vector<VnodeBitmap> split,
      VnodeBitmap::EvenSplit(upstream.vnode_count,
                             static_cast<int>(parallelism)));
  std::vector<TrackedActor> tracked;
  for (uint32_t i = 0; i < parallelism; ++i) {
    tracked.push_back({static_cast<ActorId>(100 + i),
                       static_cast<uint32_t>(split[i].Count())});
  }
  BACKFILL_ASSIGN_OR_RETURN(auto tracker, JobProgressTracker::Create(tracked));
  std::vector<std::unique_ptr<ProgressReporter>> reporters;
  std::vector<ChannelSender> barrier_senders;
  std::vector<std::unique_ptr<ArrangementBackfillExecutor>> actors;
  for (uint32_t i = 0; i < parallelism; ++i) {
    const ActorId actor = 100 + i;
    proto::ArrangementBackfillNode node;
    *node.mutable_upstream_table() = TableCatalogToProto(upstream);
    *node.mutable_progress_table() = TableCatalogToProto(
        BackfillProgressCatalog(upstream, progress_table_id));
    for (size_t c = 0; c < upstream.columns.size(); ++c) {
      node.add_upstream_column_ids(upstream.columns[c].column_id);
      node.add_output_indices(static_cast<uint32_t>(c));
    }
    node.set_chunk_size(kDefaultChunkSize);
    node.set_actor_id(actor);
    node.set_fragment_id(10);
    node.set_vnode_bitmap(split[i].Serialize());
    auto [tx, rx] = MakeChannel({16});
    barrier_senders.push_back(std::move(tx));
    reporters.push_back(std::make_unique<ProgressReporter>(actor, *tracker));
    ArrangementBackfillDeps deps;
    deps.reporter = reporters.back().get();
    deps.clock = &clock;
    BACKFILL_ASSIGN_OR_RETURN(
        auto executor,
        BuildArrangementBackfillFromPlan(
            node, store,
            std::make_unique<ReceiverExecutor>(ExecutorInfo{}, std::move(rx)),
            deps));
    actors.push_back(std::move(executor));
  }

  Mutex mu;
  CondVar cv;
  std::vector<Epoch> collected(parallelism);
  absl::Status error;
  std::atomic<uint64_t> rows{0};
  std::atomic<double> actor_cpu_seconds{0};
  absl::Time last_row_at = absl::InfinitePast();  // Guarded by mu.
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < parallelism; ++i) {
    threads.emplace_back([&, i] {
      uint64_t mine = 0;
      while (true) {
        absl::StatusOr<std::optional<Message>> next =
            NextMessage(*actors[i], clock);
        MutexLock lock(&mu);
        if (!next.ok()) {
          if (error.ok()) error = next.status();
          cv.SignalAll();
          break;
        }
        if (!next->has_value()) break;
        if (const auto* chunk = std::get_if<StreamChunk>(&**next)) {
          mine += chunk->cardinality();
          last_row_at = std::max(last_row_at, absl::Now());
        } else if (const auto* barrier = std::get_if<Barrier>(&**next)) {
          collected[i] = barrier->epoch.curr;
          cv.SignalAll();
          if (barrier->IsStopFor(100 + i)) break;
        }
      }
      rows += mine;
      timespec cpu{};
      clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
      actor_cpu_seconds += cpu.tv_sec + cpu.tv_nsec * 1e-9;
      actors[i].reset();
    });
  }

  auto inject = [&](EpochPair epoch, BarrierKind kind,
                    std::shared_ptr<const Mutation> mutation) -> absl::Status {
    for (ChannelSender& sender : barrier_senders) {
      Barrier barrier;
      barrier.epoch = epoch;
      barrier.kind = kind;
      barrier.mutation = mutation;
      BACKFILL_RETURN_IF_ERROR(sender.Send(Message(std::move(barrier)), clock));
    }
    {
      MutexLock lock(&mu);
      clock.WaitUntil(
          mu, cv,
          [&] {
            if (!error.ok()) return true;
            for (Epoch e : collected) {
              if (e < epoch.curr) return false;
            }
            return true;
          },
          absl::InfiniteFuture());
      BACKFILL_RETURN_IF_ERROR(error);
    }
    if (kind != BarrierKind::kInitial) {
      BACKFILL_RETURN_IF_ERROR(store.Checkpoint(epoch.prev));
    }
    return absl::OkStatus();
  };

  const absl::Time start = absl::Now();
  absl::Status status = [&]() -> absl::Status {
    const Epoch committed = store.CommittedEpoch(upstream.table_id);
    EpochPair epoch{Epoch(committed.value() + 1), committed};
    AddMutation add;
    for (uint32_t i = 0; i < parallelism; ++i) add.added_actors.insert(100 + i);
    BACKFILL_RETURN_IF_ERROR(
        inject(epoch, BarrierKind::kInitial,
               std::make_shared<const Mutation>(std::move(add))));
    absl::Time next_tick = absl::Now();
    while (!tracker->IsDone()) {
      next_tick += interval;
      clock.SleepUntil(next_tick);
      epoch = EpochPair{Epoch(epoch.curr.value() + 1), epoch.curr};
      BACKFILL_RETURN_IF_ERROR(
          inject(epoch, BarrierKind::kCheckpoint, nullptr));
    }
    StopMutation stop;
    for (uint32_t i = 0; i < parallelism; ++i) stop.actors.insert(100 + i);
    epoch = EpochPair{Epoch(epoch.curr.value() + 1), epoch.curr};
    return inject(epoch, BarrierKind::kCheckpoint,
                  std::make_shared<const Mutation>(std::move(stop)));
  }();
  const double seconds = SecondsSince(start);
  barrier_senders.clear();  // Ends the actors' inputs if we failed early.
  for (std::thread& thread : threads) thread.join();
  BACKFILL_RETURN_IF_ERROR(status);
  BACKFILL_RETURN_IF_ERROR(error);
  const double to_last_row = absl::ToDoubleSeconds(last_row_at - start);
  if (std::getenv("BACKFILL_BENCH_VERBOSE") != nullptr) {
    std::fprintf(stderr,
                 "  snapshot: %u actors, %.2f s to the last row, %.2f s in "
                 "all, %.2f s actor CPU\n",
                 parallelism, to_last_row, seconds, actor_cpu_seconds.load());
  }
  return SnapshotRun{to_last_row, seconds, rows.load()};
}

// ---- Cost growth: the snapshot run in a child process
// -------------------------------------------------------------

struct ChildRun {
  double seconds = 0;
  uint64_t rows = 0;
  long max_rss_kb = 0;
};

// The peak RSS of this process image, kB (VmHWM: reset by exec, unlike
// getrusage's ru_maxrss, which keeps the forking parent's peak).
long PeakRssKb() {
  long hwm_kb = 0;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmHWM:", 0) == 0) hwm_kb = std::atol(line.c_str() + 6);
  }
  return hwm_kb;
}

int ChildSnapshotMain(const Flags& flags) {
  auto store = OpenStore(flags.dir);
  TableCatalog upstream = BaseOptions(0).upstream;
  upstream.table_id = static_cast<TableId>(flags.child_table);
  SnapshotRun run =
      OrDie(RunSnapshotOnly(*store, upstream, 1,
                            static_cast<TableId>(flags.child_progress_table),
                            absl::Milliseconds(100)),
            "child snapshot");
  std::printf("%.6f %" PRIu64 " %ld\n", run.seconds, run.rows, PeakRssKb());
  return 0;
}

// Runs this binary with `args` and returns its standard output; dies if it
// fails.
std::string RunChildProcess(const std::string& self,
                            const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) Die(absl::InternalError("pipe"), "child");
  const pid_t pid = fork();
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    std::vector<char*> argv = {const_cast<char*>(self.c_str())};
    for (const std::string& arg : args) {
      argv.push_back(const_cast<char*>(arg.c_str()));
    }
    argv.push_back(nullptr);
    execv(self.c_str(), argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string output;
  char buffer[256];
  ssize_t n;
  while ((n = read(pipe_fds[0], buffer, sizeof(buffer))) > 0) {
    output.append(buffer, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    Die(absl::InternalError(absl::StrCat("child failed: ", output)), "child");
  }
  return output;
}

ChildRun RunChild(const std::string& self, const std::string& dir,
                  TableId table, TableId progress_table) {
  const std::string output = RunChildProcess(
      self, {"--child_snapshot", "--dir=" + dir,
             absl::StrCat("--child_table=", table),
             absl::StrCat("--child_progress_table=", progress_table)});
  ChildRun run;
  if (std::sscanf(output.c_str(), "%lf %" SCNu64 " %ld", &run.seconds,
                  &run.rows, &run.max_rss_kb) != 3) {
    Die(absl::InternalError(absl::StrCat("child said: ", output)), "child");
  }
  return run;
}

// ---- Building tables
// ----------------------------------------------------------------------

// Writes rows `keys` of `catalog` (WorkloadRow values, version 0), or deletes
// them, in epochs of 200k rows, each checkpointed.
void WriteRows(RocksDbStateStore& store, const StreamingJobOptions& options,
               const TableCatalog& catalog, uint64_t begin, uint64_t end,
               uint64_t step, bool erase) {
  StateTableOptions table_options;
  table_options.op_consistency = OpConsistency::kInconsistent;
  auto table = OrDie(
      StateTable::Create(catalog, store, VnodeBitmap::All(catalog.vnode_count),
                         table_options),
      "table");
  const Epoch committed = store.CommittedEpoch(catalog.table_id);
  EpochPair epoch{Epoch(committed.value() + 1), committed};
  Check(table->InitEpoch(epoch), "init");
  uint64_t in_epoch = 0;
  for (uint64_t key = begin; key < end; key += step) {
    Row row = WorkloadRow(catalog, options.workload.seed, key, 0,
                          options.workload.null_fraction);
    Check(erase ? table->Delete(std::move(row)) : table->Insert(std::move(row)),
          "write");
    if (++in_epoch == 200'000 || key + step >= end) {
      const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
      Check(table->Commit(next), "commit");
      Check(store.Checkpoint(next.prev), "checkpoint");
      epoch = next;
      in_epoch = 0;
    }
  }
}

// ---- The naive designs
// --------------------------------------------------------------------

// Copies the rows of `from` committed at `read_at` into a new table `to_id`
// (same shape), committed in one checkpoint, as a team would: a committed
// scan at a fixed epoch, vnode by vnode, decoding each value, inserting it.
// The view lives in `target_store` (the naive designs keep it apart from
// the live upstream's checkpoints).
void CopyTable(RocksDbStateStore& store, const TableCatalog& from,
               Epoch read_at, RocksDbStateStore& target_store, TableId to_id) {
  std::unique_ptr<ValueRowCodec> codec = ValueCodecOf(from);
  TableCatalog to = from;
  to.table_id = to_id;
  StateTableOptions write_options;
  write_options.op_consistency = OpConsistency::kInconsistent;
  auto target =
      OrDie(StateTable::Create(to, target_store,
                               VnodeBitmap::All(to.vnode_count), write_options),
            "target");
  const Epoch committed = target_store.CommittedEpoch(to_id);
  EpochPair epoch{Epoch(committed.value() + 1), committed};
  Check(target->InitEpoch(epoch), "init target");
  // Pins read_at for the whole copy (as a RocksDB snapshot would): garbage
  // collection may not pass it between the vnodes' scans.
  auto pin =
      OrDie(store.NewIterator(from.table_id, 0, PkRange{}, read_at), "pin");
  Row values;
  for (int vnode = 0; vnode < from.vnode_count; ++vnode) {
    auto it =
        OrDie(store.NewIterator(from.table_id, static_cast<VirtualNode>(vnode),
                                PkRange{}, read_at),
              "iter");
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      Check(codec->DecodeInto(it->value(), &values), "decode");
      Row row(from.columns.size());
      for (size_t i = 0; i < from.value_indices.size(); ++i) {
        row[from.value_indices[i]] = std::move(values[i]);
      }
      Check(target->Insert(std::move(row)), "insert");
    }
    Check(it->status(), "scan");
  }
  const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
  Check(target->Commit(next), "commit");
  Check(target_store.Checkpoint(next.prev), "checkpoint");
}

// A live upstream for the naive designs: the runtime's DML source (the same
// workload as the job's) driven by barriers every 100 ms, each checkpointed.
// `on_chunk` sees every change after it was written to the table.
class LiveUpstream {
 public:
  LiveUpstream(RocksDbStateStore& store, const StreamingJobOptions& options,
               std::function<void(const StreamChunk&)> on_chunk)
      : store_(store), options_(options), on_chunk_(std::move(on_chunk)) {}

  void Start() {
    auto [tx, rx] = MakeChannel({16});
    sender_.emplace(std::move(tx));
    auto table = OrDie(
        StateTable::Create(options_.upstream, store_,
                           VnodeBitmap::All(options_.upstream.vnode_count)),
        "upstream table");
    auto offsets =
        OrDie(StateTable::Create(DmlSourceExecutor::OffsetTableCatalog(
                                     options_.source_offset_table_id),
                                 store_, VnodeBitmap::All(1)),
              "offset table");
    source_ = std::make_unique<DmlSourceExecutor>(
        std::move(rx), std::move(table), std::move(offsets), options_.workload,
        stop_, ExecutorInfo{});
    actor_ = std::thread([this] {
      while (true) {
        auto next = NextMessage(*source_, Clock::Real());
        Check(next.status(), "upstream");
        if (!next->has_value()) break;
        if (const auto* chunk = std::get_if<StreamChunk>(&**next)) {
          on_chunk_(*chunk);
        } else if (const auto* barrier = std::get_if<Barrier>(&**next)) {
          MutexLock lock(&mu_);
          collected_ = barrier->epoch.curr;
          cv_.SignalAll();
          if (barrier->MutationAs<StopMutation>() != nullptr) break;
        }
      }
    });
    coordinator_ = std::thread([this] {
      const Epoch committed = store_.CommittedEpoch(options_.upstream.table_id);
      EpochPair epoch{Epoch(committed.value() + 1), committed};
      Inject(epoch, BarrierKind::kInitial, nullptr);
      absl::Time next_tick = absl::Now();
      while (true) {
        next_tick += absl::Milliseconds(100);
        Clock::Real().SleepUntil(next_tick);
        const bool stop = stopping_.load();
        epoch = EpochPair{Epoch(epoch.curr.value() + 1), epoch.curr};
        std::shared_ptr<const Mutation> mutation;
        if (stop) {
          stop_->store(true);
          mutation = std::make_shared<const Mutation>(StopMutation{{1}});
        }
        Inject(epoch, BarrierKind::kCheckpoint, mutation);
        if (stop) break;
      }
    });
  }

  // Stops the upstream after its next checkpoint.
  void Stop() {
    stopping_ = true;
    coordinator_.join();
    actor_.join();
    source_.reset();
  }

  uint64_t ops() const { return source_ != nullptr ? source_->offset() : 0; }

 private:
  void Inject(EpochPair epoch, BarrierKind kind,
              std::shared_ptr<const Mutation> mutation) {
    Barrier barrier;
    barrier.epoch = epoch;
    barrier.kind = kind;
    barrier.mutation = std::move(mutation);
    Check(sender_->Send(Message(std::move(barrier)), Clock::Real()), "send");
    {
      MutexLock lock(&mu_);
      Clock::Real().WaitUntil(
          mu_, cv_,
          [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
            return collected_ >= epoch.curr;
          },
          absl::InfiniteFuture());
    }
    if (kind != BarrierKind::kInitial) {
      Check(store_.Checkpoint(epoch.prev), "checkpoint");
    }
  }

  RocksDbStateStore& store_;
  const StreamingJobOptions& options_;
  std::function<void(const StreamChunk&)> on_chunk_;
  std::shared_ptr<std::atomic<bool>> stop_ =
      std::make_shared<std::atomic<bool>>(false);
  std::atomic<bool> stopping_{false};
  std::optional<ChannelSender> sender_;
  std::unique_ptr<DmlSourceExecutor> source_;
  std::thread actor_;
  std::thread coordinator_;
  Mutex mu_;
  CondVar cv_;
  Epoch collected_ ABSL_GUARDED_BY(mu_);
};

// ---- The run
// ----------------------------------------------------------------------

constexpr char kRowsValues[] = "an integer >= 1000";
// The upstream-only runs: checkpoints after the (complete) view's first
// barrier, at the default scenario's cadence (every 2nd of 100 ms barriers):
// about 5 s each. The capacity run's offer, ops/s: more than any machine.
constexpr uint32_t kUpstreamOnlyCheckpoints = 25;
// Rounds of the cost-growth runs (an N run and a 4N run each).
constexpr int kGrowthRounds = 3;
// Rounds of the end-to-end run and the raw write of the view.
constexpr int kEndToEndRounds = 3;
constexpr double kUnboundedOps = 1e9;
constexpr char kLoadValues[] = "a number >= 0";
constexpr char kGrowthSecondsValues[] = "a number in [0, 600]";
constexpr char kSpeedRoundsValues[] = "an integer in [1, 50]";

// The flags after validation (one line naming the flag on error).
absl::StatusOr<Flags> ValidatedFlags() {
  Flags flags;
  flags.rows = absl::GetFlag(FLAGS_rows);
  if (flags.rows < 1000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--rows=", flags.rows, ": expected ", kRowsValues));
  }
  flags.load = absl::GetFlag(FLAGS_load);
  if (flags.load.has_value() && !(*flags.load >= 0)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--load=", *flags.load, ": expected ", kLoadValues,
        ", or empty for unset"));
  }
  flags.json = absl::GetFlag(FLAGS_json);
  flags.plot = absl::GetFlag(FLAGS_plot);
  flags.dir = absl::GetFlag(FLAGS_dir);
  flags.child_snapshot = absl::GetFlag(FLAGS_child_snapshot);
  flags.child_table = absl::GetFlag(FLAGS_child_table);
  flags.child_progress_table = absl::GetFlag(FLAGS_child_progress_table);
  flags.child_job = absl::GetFlag(FLAGS_child_job);
  flags.child_vnodes = absl::GetFlag(FLAGS_child_vnodes);
  flags.growth_seconds = absl::GetFlag(FLAGS_growth_seconds);
  if (!(flags.growth_seconds >= 0 && flags.growth_seconds <= 600)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--growth_seconds=", flags.growth_seconds, ": expected ",
                     kGrowthSecondsValues));
  }
  flags.speed_rounds = absl::GetFlag(FLAGS_speed_rounds);
  if (flags.speed_rounds < 1 || flags.speed_rounds > 50) {
    return absl::InvalidArgumentError(
        absl::StrCat("--speed_rounds=", flags.speed_rounds, ": expected ",
                     kSpeedRoundsValues));
  }
  flags.only_snapshot = absl::GetFlag(FLAGS_only_snapshot);
  return flags;
}

// A bad command line: one line on standard error, exit 2; with --json the
// JSON line {"error": ...} is still the last line of standard output.
int FailCommandLine(const absl::Status& status, bool json) {
  const std::string text = absl::StrCat(
      absl::StatusCodeToString(status.code()), ": ", status.message());
  std::fprintf(stderr, "backfill_bench: error: %s\n", text.c_str());
  if (json) {
    JsonObject object;
    object.Add("error", absl::string_view(text));
    std::printf("%s\n", object.ToString().c_str());
  }
  return 2;
}

// --json as given, even when another flag failed to parse.
bool JsonRequested(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const absl::string_view arg = argv[i];
    if (arg == "--json" || arg == "-json" || arg == "--json=true") json = true;
    if (arg == "--nojson" || arg == "--json=false") json = false;
  }
  return json;
}

// One observation of a loaded run, per barrier.
struct Sample {
  double seconds = 0;
  double snapshot_rows_per_second = 0;
  double upstream_ops_per_second = 0;
  double barrier_latency_ms = 0;
  // The job-wide snapshot rate limit in force (the adaptive controller's
  // rate in adaptive mode); 0 when there is none.
  double rate_limit_rows_per_second = 0;
  // The two rates over the last second (from the newest sample at least
  // kRateWindowSeconds old, or the start). Barriers come at uneven gaps, so
  // the per-barrier rates above swing: a 6 ms gap that happens to hold a
  // whole chunk reads as a rate far over the limit. These are what the plot
  // draws.
  double window_snapshot_rows_per_second = 0;
  double window_upstream_ops_per_second = 0;
};

constexpr double kRateWindowSeconds = 1.0;

// What the streaming job under load measured.
struct JobRun {
  JobResult result;
  double backfill_seconds = 0;  // Creation to the finish barrier.
  uint64_t snapshot_rows = 0;
  uint64_t upstream_ops_during_backfill = 0;
  std::vector<Sample> timeline;
  // This process's peak RSS during the run, kB (RunJobOnCopy; 0 otherwise).
  int64_t peak_rss_kb = 0;
};

JobRun RunJob(RocksDbStateStore& store, const StreamingJobOptions& options) {
  JobRun run;
  JobProgress previous;
  // The progress reports of the last kRateWindowSeconds, plus the newest one
  // older than that (the window's start).
  std::deque<JobProgress> window(1);
  bool done = false;
  auto observer = [&](const JobProgress& progress) {
    const double dt = progress.seconds - previous.seconds;
    Sample sample;
    sample.seconds = progress.seconds;
    if (dt > 0) {
      sample.snapshot_rows_per_second =
          (progress.snapshot_rows - previous.snapshot_rows) / dt;
      sample.upstream_ops_per_second =
          (progress.upstream_ops - previous.upstream_ops) / dt;
    }
    while (window.size() > 1 &&
           progress.seconds - window[1].seconds >= kRateWindowSeconds) {
      window.pop_front();
    }
    const double window_dt = progress.seconds - window.front().seconds;
    if (window_dt > 0) {
      sample.window_snapshot_rows_per_second =
          (progress.snapshot_rows - window.front().snapshot_rows) / window_dt;
      sample.window_upstream_ops_per_second =
          (progress.upstream_ops - window.front().upstream_ops) / window_dt;
    }
    window.push_back(progress);
    sample.barrier_latency_ms = progress.last_backfill_barrier_latency_ms;
    sample.rate_limit_rows_per_second = progress.rate_limit.rows_per_second();
    run.timeline.push_back(sample);
    previous = progress;
    if (progress.backfill_done && !done) {
      done = true;
      run.backfill_seconds = progress.seconds;
      run.snapshot_rows = progress.snapshot_rows;
      run.upstream_ops_during_backfill = progress.upstream_ops;
    }
  };
  run.result =
      OrDie(RunStreamingJob(store, options, nullptr, observer, Clock::Real()),
            "streaming job");
  if (!run.result.consistent) {
    Die(absl::InternalError(run.result.mismatch), "the view is inconsistent");
  }
  return run;
}

// The upstream with no backfill: the job of `options`, whose view is
// already complete in `store` (a finished job), rerun for its
// extra_checkpoints_after_finish checkpoints. The pipeline is the loaded
// runs' (source, dispatcher, backfill actors forwarding, view), minus the
// snapshot.
struct UpstreamRun {
  double ops_per_second = 0;
  double barrier_latency_p50_ms = 0;
  double barrier_latency_p99_ms = 0;
};

UpstreamRun RunUpstreamOnly(RocksDbStateStore& store,
                            const StreamingJobOptions& options) {
  std::optional<JobProgress> first;
  JobProgress last;
  auto observer = [&](const JobProgress& progress) {
    if (!first.has_value()) first = progress;
    last = progress;
  };
  const JobResult result =
      OrDie(RunStreamingJob(store, options, nullptr, observer, Clock::Real()),
            "upstream without a backfill");
  if (!result.consistent) {
    Die(absl::InternalError(result.mismatch), "the view is inconsistent");
  }
  UpstreamRun run;
  if (first.has_value() && last.seconds > first->seconds) {
    run.ops_per_second = (last.upstream_ops - first->upstream_ops) /
                         (last.seconds - first->seconds);
  }
  // Every barrier after the first found the backfill done: the same measure
  // as the loaded runs' backfill barrier latency, without a snapshot.
  run.barrier_latency_p50_ms = result.steady_barrier_latency_p50_ms;
  run.barrier_latency_p99_ms = result.steady_barrier_latency_p99_ms;
  return run;
}

// Resets this process's peak resident set (VmHWM, read by PeakRssKb) to
// its current RSS. The loaded runs of each backfill kind run in this
// process, one after the other, so each reset before a run makes the figure
// that run's (plus what the process already holds).
void ResetPeakRss() {
  std::ofstream clear_refs("/proc/self/clear_refs");
  clear_refs << "5";  // Linux: resets VmHWM to the current RSS.
}

// The base job with one backfill actor under `load` upstream ops/s.
StreamingJobOptions OneActorJob(const StreamingJobOptions& base, double load) {
  StreamingJobOptions options = base;
  options.parallelism = 1;
  options.workload.ops_per_second = load;
  return options;
}

// RunJob over a fresh copy of the table at `base_dir`, in `work` (every run
// starts from the same bytes), with the run's peak RSS.
JobRun RunJobOnCopy(const std::string& base_dir, const std::string& work,
                    const StreamingJobOptions& options) {
  CopyStore(base_dir, work);
  auto store = OpenStore(work);
  ResetPeakRss();
  JobRun run = RunJob(*store, options);
  run.peak_rss_kb = PeakRssKb();
  return run;
}

// The snapshot rows/s and upstream ops/s of a loaded run while it
// backfilled (creation to the finish barrier).
double SnapshotRate(const JobRun& run) {
  return run.backfill_seconds > 0 ? run.snapshot_rows / run.backfill_seconds
                                  : 0;
}
double UpstreamRateDuringBackfill(const JobRun& run) {
  return run.backfill_seconds > 0
             ? run.upstream_ops_during_backfill / run.backfill_seconds
             : 0;
}

// ---- The view's write limit, a burst epoch, many vnodes (issue 15)
// ---------------------------------------------------------------------

// The limit for writing a view: `rows` rows of the view of `options`
// (WorkloadRow values, version 0) written straight into RocksDB with the
// store's encoding (FORMAT.md: key table | vnode | pk | ~epoch, value 0x01
// then the positional row), one synced WriteBatch of `group_rows` rows per
// checkpoint with the committed epoch, as a checkpoint writes. Only encoding
// and writing are timed (rows are generated a group at a time before).
// `path` must be a new store directory (created by the store, closed).
double RawWriteRowsPerSecond(const std::string& path,
                             const StreamingJobOptions& options, uint64_t rows,
                             uint64_t group_rows) {
  const TableCatalog view = ViewCatalog(options);
  const std::vector<int> view_columns = ViewColumns(options);
  const KeySerde pk_serde =
      OrDie(KeySerde::CreateFromColumnTypes(view.PkColumnTypes(),
                                            view.pk_orders),
            "pk serde");
  const VnodeHasher hasher = OrDie(
      VnodeHasher::Create(view.dist_key_indices, view.vnode_count), "hasher");
  const std::unique_ptr<ValueRowCodec> codec =
      OrDie(MakeValueCodec(view), "codec");
  std::unique_ptr<raw_rocksdb_for_test::RawDb> raw;
  rocksdb::Status opened = raw_rocksdb_for_test::Open(path, 64 << 20, &raw);
  if (!opened.ok()) Die(absl::InternalError(opened.ToString()), "raw open");
  group_rows = std::max<uint64_t>(group_rows, 1);
  std::vector<Row> group;
  std::string key, pk, value, committed(8, '\0');
  Row values;
  double seconds = 0;
  uint64_t epoch = 1;
  for (uint64_t begin = 0; begin < rows; begin += group_rows, ++epoch) {
    group.clear();
    for (uint64_t k = begin; k < std::min(rows, begin + group_rows); ++k) {
      group.push_back(
          ProjectRow(WorkloadRow(options.upstream, options.workload.seed, k, 0,
                                 options.workload.null_fraction),
                     view_columns));
    }
    const absl::Time start = absl::Now();
    rocksdb::WriteBatch batch;
    for (const Row& row : group) {
      pk.clear();
      pk_serde.Serialize(ProjectRow(row, view.pk_indices), &pk);
      key.clear();
      AppendFullKey(view.table_id, hasher.VnodeOf(row), pk, Epoch(epoch), &key);
      values.clear();
      for (int column : view.value_indices) values.push_back(row[column]);
      value.assign(1, '\x01');
      codec->Encode(values, &value);
      if (!batch.Put(raw->data(), key, value).ok()) {
        Die(absl::InternalError("batch put"), "raw write");
      }
    }
    for (int i = 0; i < 8; ++i) {
      committed[i] = static_cast<char>(epoch >> (56 - 8 * i));
    }
    if (!batch.Put(raw->meta(), "committed_epoch", committed).ok()) {
      Die(absl::InternalError("batch put"), "raw write");
    }
    rocksdb::WriteOptions write_options;
    write_options.sync = true;  // As the store's checkpoints (its default).
    const rocksdb::Status written = raw->db->Write(write_options, &batch);
    if (!written.ok()) {
      Die(absl::InternalError(written.ToString()), "raw write");
    }
    seconds += SecondsSince(start);
  }
  return seconds > 0 ? rows / seconds : 0;
}

// A burst: one backfill actor over `upstream` (at most `snapshot_rows_per_
// second`, so that its snapshot outlasts the run) given epochs of upstream
// inserts of new keys from `first_new_key` on: `rows_per_epoch` rows per
// epoch, and 10x that in one epoch, with the job's default buffer budget.
struct BurstRun {
  uint64_t budget_bytes = 0;
  // The most upstream change data the actor buffered in one epoch.
  uint64_t peak_buffer_bytes = 0;
  // Epochs in which the buffer reached its budget (the position froze).
  uint64_t freezes = 0;
  // The snapshot was still running after the burst (else the burst was
  // forwarded without buffering and measured nothing).
  bool snapshot_active = false;
};

absl::StatusOr<BurstRun> RunBurst(StateStore& store,
                                  const StreamingJobOptions& options,
                                  TableId progress_table_id,
                                  uint64_t first_new_key,
                                  uint64_t rows_per_epoch) {
  constexpr int kEpochs = 6, kBurstEpoch = 3, kBurstFactor = 10;
  constexpr ActorId kActor = 100;
  const TableCatalog& upstream = options.upstream;
  Clock& clock = Clock::Real();
  rows_per_epoch = std::max<uint64_t>(rows_per_epoch, 1);
  const uint64_t chunk_rows = kDefaultChunkSize;
  const size_t capacity =
      kBurstFactor * rows_per_epoch / chunk_rows + 2;  // The burst's chunks.
  proto::ArrangementBackfillNode node;
  *node.mutable_upstream_table() = TableCatalogToProto(upstream);
  *node.mutable_progress_table() =
      TableCatalogToProto(BackfillProgressCatalog(upstream, progress_table_id));
  for (size_t c = 0; c < upstream.columns.size(); ++c) {
    node.add_upstream_column_ids(upstream.columns[c].column_id);
    node.add_output_indices(static_cast<uint32_t>(c));
  }
  node.set_chunk_size(kDefaultChunkSize);
  node.set_actor_id(kActor);
  node.set_fragment_id(10);
  node.set_rate_limit(1000);
  node.set_upstream_buffer_budget_bytes(options.upstream_buffer_budget_bytes);
  auto [sender, rx] = MakeChannel({capacity});
  ChannelSender tx = std::move(sender);  // Captured below (not a binding).
  ArrangementBackfillDeps deps;
  deps.clock = &clock;
  BACKFILL_ASSIGN_OR_RETURN(auto actor, BuildArrangementBackfillFromPlan(
                                            node, store,
                                            std::make_unique<ReceiverExecutor>(
                                                ExecutorInfo{}, std::move(rx)),
                                            deps));
  const std::vector<DataType> types = ColumnTypes(upstream.columns);
  uint64_t next_key = first_new_key;
  // Sends the epoch's inserts and its barrier, then takes the actor's
  // output until the barrier comes out (one thread: the channel holds a
  // whole epoch).
  auto epoch_of =
      [&](EpochPair epoch, BarrierKind kind, uint64_t rows,
          std::shared_ptr<const Mutation> mutation) -> absl::Status {
    while (rows > 0) {
      const uint64_t n = std::min(rows, chunk_rows);
      std::vector<Row> chunk;
      for (uint64_t i = 0; i < n; ++i) {
        chunk.push_back(WorkloadRow(upstream, options.workload.seed, next_key++,
                                    1, options.workload.null_fraction));
      }
      BACKFILL_RETURN_IF_ERROR(tx.Send(
          Message(StreamChunk::FromRows(
              types, std::vector<Op>(chunk.size(), Op::kInsert), chunk)),
          clock));
      rows -= n;
    }
    Barrier barrier;
    barrier.epoch = epoch;
    barrier.kind = kind;
    barrier.mutation = std::move(mutation);
    BACKFILL_RETURN_IF_ERROR(tx.Send(Message(std::move(barrier)), clock));
    while (true) {
      BACKFILL_ASSIGN_OR_RETURN(std::optional<Message> next,
                                NextMessage(*actor, clock));
      if (!next.has_value()) {
        return absl::InternalError("the burst actor ended early");
      }
      if (const auto* out = std::get_if<Barrier>(&*next);
          out != nullptr && out->epoch.curr == epoch.curr) {
        break;
      }
    }
    if (kind != BarrierKind::kInitial) {
      BACKFILL_RETURN_IF_ERROR(store.Checkpoint(epoch.prev));
    }
    return absl::OkStatus();
  };
  const Epoch committed = store.CommittedEpoch(upstream.table_id);
  EpochPair epoch{Epoch(committed.value() + 1), committed};
  AddMutation add;
  add.added_actors.insert(kActor);
  BACKFILL_RETURN_IF_ERROR(
      epoch_of(epoch, BarrierKind::kInitial, 0,
               std::make_shared<const Mutation>(std::move(add))));
  for (int e = 1; e <= kEpochs; ++e) {
    epoch = EpochPair{Epoch(epoch.curr.value() + 1), epoch.curr};
    BACKFILL_RETURN_IF_ERROR(epoch_of(
        epoch, BarrierKind::kCheckpoint,
        rows_per_epoch * (e == kBurstEpoch ? kBurstFactor : 1), nullptr));
  }
  BurstRun run;
  run.budget_bytes = actor->upstream_buffer_budget_bytes();
  run.peak_buffer_bytes = actor->peak_upstream_buffer_bytes();
  run.freezes = actor->num_buffer_freezes();
  run.snapshot_active = !actor->is_finished();
  return run;
}

// Cost per vnode: the loaded job (parallelism 2) over a table built with
// --child_vnodes vnodes in the store at --dir, in a child process so that
// its peak RSS is its own; prints "barrier_p99_ms peak_rss_kb".
constexpr uint32_t kVnodeRunParallelism = 2;

StreamingJobOptions VnodeRunOptions(uint64_t rows, uint32_t vnodes,
                                    double load) {
  StreamingJobOptions options = BaseOptions(rows);
  options.upstream.vnode_count = static_cast<int>(vnodes);
  options.parallelism = kVnodeRunParallelism;
  options.workload.ops_per_second = load;
  return options;
}

struct VnodeRun {
  double barrier_latency_p99_ms = 0;
  long max_rss_kb = 0;
};

VnodeRun RunVnodeChild(const std::string& self, const std::string& dir,
                       uint64_t rows, uint32_t vnodes, double load) {
  std::vector<std::string> args = {
      "--child_job", "--dir=" + dir, absl::StrCat("--rows=", rows),
      absl::StrCat("--child_vnodes=", vnodes), absl::StrCat("--load=", load)};
  if (const auto channel_rows = absl::GetFlag(FLAGS_channel_rows)) {
    args.push_back(absl::StrCat("--channel_rows=", *channel_rows));
  }
  if (const auto ms = absl::GetFlag(FLAGS_batch_interval_ms)) {
    args.push_back(absl::StrCat("--batch_interval_ms=", *ms));
  }
  const std::string output = RunChildProcess(self, args);
  VnodeRun run;
  if (std::sscanf(output.c_str(), "%lf %ld", &run.barrier_latency_p99_ms,
                  &run.max_rss_kb) != 2) {
    Die(absl::InternalError(absl::StrCat("child said: ", output)), "child");
  }
  return run;
}

int ChildJobMain(const Flags& flags) {
  auto store = OpenStore(flags.dir);
  const JobRun run = RunJob(
      *store,
      VnodeRunOptions(flags.rows, flags.child_vnodes, flags.load.value_or(0)));
  std::printf("%.3f %ld\n", run.result.backfill_barrier_latency_p99_ms,
              PeakRssKb());
  return 0;
}

void WriteTimeline(const std::string& data,
                   const std::vector<Sample>& timeline) {
  std::ofstream out(data);
  out << "# seconds snapshot_rows_per_second upstream_ops_per_second "
         "barrier_latency_ms rate_limit_rows_per_second "
         "window_snapshot_rows_per_second window_upstream_ops_per_second\n";
  for (const Sample& s : timeline) {
    out << s.seconds << " " << s.snapshot_rows_per_second << " "
        << s.upstream_ops_per_second << " " << s.barrier_latency_ms << " "
        << s.rate_limit_rows_per_second << " "
        << s.window_snapshot_rows_per_second << " "
        << s.window_upstream_ops_per_second << "\n";
  }
}

// The loaded (unlimited) run and the adaptive run, one above the other.
struct PlottedRun {
  const std::vector<Sample>* timeline;
  double backfill_seconds;
};

void Plot(const std::string& file, PlottedRun loaded, PlottedRun adaptive,
          double adaptive_target_ms) {
  const std::string data = file + ".dat";
  const std::string adaptive_data = file + ".adaptive.dat";
  WriteTimeline(data, *loaded.timeline);
  WriteTimeline(adaptive_data, *adaptive.timeline);
  FILE* gnuplot = popen("gnuplot", "w");
  if (gnuplot == nullptr) {
    std::fprintf(stderr, "backfill_bench: cannot run gnuplot; data in %s\n",
                 data.c_str());
    return;
  }
  std::fprintf(gnuplot,
               "set terminal png size 1000,1400\n"
               "set output '%s'\n"
               "set multiplot layout 5,1 title 'backfill under load: "
               "unlimited (done at %.1f s), then adaptive (done at %.1f s)'\n"
               "set xlabel 'seconds'\nset grid\n"
               "set arrow 1 from %f, graph 0 to %f, graph 1 nohead dt 2\n"
               "plot '%s' using 1:6 with lines title 'unlimited: snapshot "
               "rows/s (last second)'\n"
               "plot '%s' using 1:7 with lines title 'unlimited: upstream "
               "ops/s (last second)'\n"
               "plot '%s' using 1:4 with lines title 'unlimited: barrier "
               "latency in the backfill (ms)'\n"
               "set arrow 1 from %f, graph 0 to %f, graph 1 nohead dt 2\n"
               "plot '%s' using 1:5 with lines title 'adaptive: rate limit "
               "(rows/s)', '%s' using 1:6 with lines title 'adaptive: "
               "snapshot rows/s (last second)'\n"
               "plot '%s' using 1:4 with lines title 'adaptive: barrier "
               "latency in the backfill (ms)', %f with lines dt 2 title "
               "'target'\n"
               "unset multiplot\n",
               file.c_str(), loaded.backfill_seconds,
               adaptive.backfill_seconds, loaded.backfill_seconds,
               loaded.backfill_seconds, data.c_str(), data.c_str(),
               data.c_str(), adaptive.backfill_seconds,
               adaptive.backfill_seconds, adaptive_data.c_str(),
               adaptive_data.c_str(), adaptive_data.c_str(),
               adaptive_target_ms);
  const int status = pclose(gnuplot);
  if (status != 0) {
    std::fprintf(stderr, "backfill_bench: gnuplot failed; data in %s\n",
                 data.c_str());
  }
}

int Main(int argc, char** argv) {
  CommandFlagsConfig config;
  config.program = "backfill_bench";
  config.usage =
      "backfill_bench [flags]: the performance benchmark of issue 9 (tools/"
      "README.md):\nthe backfill against the scan limit and the naive "
      "designs, one run, a table;\nwith --json the last line of standard "
      "output is one JSON object.";
  config.help_files = {"tools/backfill_bench.cc"};
  config.accepted_values = {{"rows", kRowsValues},
                            {"load", kLoadValues},
                            {"growth_seconds", kGrowthSecondsValues},
                            {"speed_rounds", kSpeedRoundsValues}};
  absl::StatusOr<CommandLine> command_line =
      ParseCommandFlags(argc, argv, config, std::cout);
  if (!command_line.ok()) {
    return FailCommandLine(command_line.status(), JsonRequested(argc, argv));
  }
  if (command_line->help_shown) return 0;
  if (!command_line->positional.empty()) {
    return FailCommandLine(
        absl::InvalidArgumentError(absl::StrCat(
            "unexpected argument \"", command_line->positional[0],
            "\" (backfill_bench --help lists the flags)")),
        JsonRequested(argc, argv));
  }
  absl::StatusOr<Flags> validated = ValidatedFlags();
  if (!validated.ok()) {
    return FailCommandLine(validated.status(), absl::GetFlag(FLAGS_json));
  }
  const Flags flags = *std::move(validated);
  if (flags.child_snapshot) return ChildSnapshotMain(flags);
  if (flags.child_job) return ChildJobMain(flags);
  const absl::Time bench_start = absl::Now();
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string dir =
      !flags.dir.empty()
          ? flags.dir
          : std::string(tmp != nullptr ? tmp : "/tmp") + "/backfill_bench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto log = [&](const std::string& what) {
    std::fprintf(stderr, "[%6.1f s] %s\n", SecondsSince(bench_start),
                 what.c_str());
  };

  const StreamingJobOptions base = BaseOptions(flags.rows);
  const TableCatalog& upstream = base.upstream;
  const std::string base_dir = dir + "/base";
  log(absl::StrCat("building the upstream table: ", flags.rows, " rows"));
  const absl::Time build_start = absl::Now();
  {
    auto store = OpenStore(base_dir);
    OrDie(LoadInitialRows(*store, base), "load");
  }
  const double build_seconds = SecondsSince(build_start);

  // (a) The physical limit and (b) the backfill alone, in interleaved
  // rounds: each round runs the raw scan with 1 and 2 threads, then the
  // snapshot with 1 and 2 actors, back to back, and each ratio is the
  // median of the rounds' ratios. This machine's speed drifts within
  // seconds (its second vCPU comes and goes); a ratio of two runs a minute
  // apart measured that drift more than our code.
  log(absl::StrCat("raw RocksDB scan and snapshot backfill, 1 and 2 each, ",
                   flags.speed_rounds, " rounds"));
  // One round's rates, rows/s: raw scan and snapshot, 1 and 2 each.
  struct SpeedRound {
    double raw1, raw2, snapshot1, snapshot2;
  };
  std::vector<SpeedRound> rounds;
  {
    const std::string work = dir + "/snapshot";
    CopyStore(base_dir, work);
    auto store = OpenStore(work);
    std::unique_ptr<raw_rocksdb_for_test::RawDb> raw;
    rocksdb::Status opened =
        raw_rocksdb_for_test::Open(base_dir, 64 << 20, &raw);
    if (!opened.ok()) {
      Die(absl::InternalError(opened.ToString()), "raw open");
    }
    std::unique_ptr<ValueRowCodec> codec = ValueCodecOf(upstream);
    uint64_t table_rows = 0;
    // Warms the page cache with the base's files (the copy's were just
    // written, so they are in it already).
    RawScanRowsPerSecond(*raw, *codec, upstream, 1, &table_rows);
    TableId progress_table = 901;
    for (uint32_t round = 0; round < flags.speed_rounds; ++round) {
      uint64_t rows1 = 0, rows2 = 0;
      const double raw1 =
          RawScanRowsPerSecond(*raw, *codec, upstream, 1, &rows1);
      const double raw2 =
          RawScanRowsPerSecond(*raw, *codec, upstream, 2, &rows2);
      const SnapshotRun snapshot1 =
          OrDie(RunSnapshotOnly(*store, upstream, 1, progress_table++,
                                absl::Milliseconds(100)),
                "snapshot, 1 actor");
      const SnapshotRun snapshot2 =
          OrDie(RunSnapshotOnly(*store, upstream, 2, progress_table++,
                                absl::Milliseconds(100)),
                "snapshot, 2 actors");
      if (rows1 != table_rows || rows2 != table_rows ||
          snapshot1.rows != table_rows || snapshot2.rows != table_rows) {
        Die(absl::InternalError(
                absl::StrCat("rows read: raw ", rows1, "/", rows2,
                             ", snapshot ", snapshot1.rows, "/", snapshot2.rows,
                             "; the table has ", table_rows)),
            "scan speed");
      }
      const SpeedRound& r = rounds.emplace_back(
          SpeedRound{raw1, raw2, snapshot1.rows_per_second(),
                     snapshot2.rows_per_second()});
      log(absl::StrFormat(
          "  round %u: raw %.0f, 2 threads %.0f; snapshot %.0f (%.2f of raw), "
          "2 actors %.0f (speedup %.2f)",
          round + 1, r.raw1, r.raw2, r.snapshot1, r.snapshot1 / r.raw1,
          r.snapshot2, r.snapshot2 / r.snapshot1));
    }
    raw.reset();
    store.reset();
    std::filesystem::remove_all(work);
  }
  auto median = [&rounds](auto figure) { return MedianOver(rounds, figure); };
  const double raw_rate = median([](const SpeedRound& r) { return r.raw1; });
  const double raw2_rate = median([](const SpeedRound& r) { return r.raw2; });
  const double snapshot_rate =
      median([](const SpeedRound& r) { return r.snapshot1; });
  const double snapshot2_rate =
      median([](const SpeedRound& r) { return r.snapshot2; });
  const double snapshot_vs_raw_scan =
      median([](const SpeedRound& r) { return r.snapshot1 / r.raw1; });
  const double raw_speedup =
      median([](const SpeedRound& r) { return r.raw2 / r.raw1; });
  const double snapshot_speedup =
      median([](const SpeedRound& r) { return r.snapshot2 / r.snapshot1; });

  if (flags.only_snapshot) {
    std::printf(
        "raw %.0f rows/s (2 threads: speedup %.2f); snapshot 1 actor %.0f "
        "(%.2f), 2 actors %.0f (speedup %.2f); medians of %u rounds\n",
        raw_rate, raw_speedup, snapshot_rate, snapshot_vs_raw_scan,
        snapshot2_rate, snapshot_speedup, flags.speed_rounds);
    return 0;
  }

  // End to end, no load: the streaming job with 1 actor, view in RocksDB;
  // and the view's write limit: its rows written straight into RocksDB, one
  // WriteBatch per checkpoint interval's worth of the end-to-end run's rows.
  // kEndToEndRounds rounds of the two back to back: the rates are medians,
  // the ratio the median of the rounds' ratios (one pair, a minute apart,
  // measured the machine's drift as much as the view's writes).
  log(absl::StrCat("end to end, no load, and the raw write of the view: ",
                   kEndToEndRounds, " rounds"));
  struct EndToEndRound {
    double e2e, raw_write;
  };
  std::vector<EndToEndRound> e2e_rounds;
  const double checkpoint_seconds = absl::ToDoubleSeconds(
      base.barrier_interval * static_cast<int64_t>(base.checkpoint_frequency));
  for (int round = 0; round < kEndToEndRounds; ++round) {
    // The first round's store stays: the upstream-only runs below use it.
    const std::string e2e_dir = dir + (round == 0 ? "/e2e" : "/e2e_again");
    const double e2e =
        SnapshotRate(RunJobOnCopy(base_dir, e2e_dir, OneActorJob(base, 0)));
    if (round > 0) std::filesystem::remove_all(e2e_dir);
    const std::string work = dir + "/raw_write";
    OpenStore(work);  // Creates the store's column families, then closes.
    const double raw_write =
        RawWriteRowsPerSecond(work, base, flags.rows,
                              static_cast<uint64_t>(e2e * checkpoint_seconds));
    std::filesystem::remove_all(work);
    e2e_rounds.push_back({e2e, raw_write});
    log(absl::StrFormat("  round %d: end to end %.0f, raw write %.0f (%.2f)",
                        round + 1, e2e, raw_write, e2e / raw_write));
  }
  const double e2e_rate =
      MedianOver(e2e_rounds, [](const EndToEndRound& r) { return r.e2e; });
  const double raw_write_rate = MedianOver(
      e2e_rounds, [](const EndToEndRound& r) { return r.raw_write; });
  const double e2e_vs_raw_write = MedianOver(
      e2e_rounds, [](const EndToEndRound& r) { return r.e2e / r.raw_write; });

  // The same with the view's fast path: writes without the point read per
  // row that checks each one (StreamingJobOptions::view_op_consistency).
  log("end to end, no load, unchecked view writes");
  StreamingJobOptions unchecked = OneActorJob(base, 0);
  unchecked.view_op_consistency = OpConsistency::kInconsistent;
  const double e2e_unchecked_rate =
      SnapshotRate(RunJobOnCopy(base_dir, dir + "/e2e_unchecked", unchecked));
  std::filesystem::remove_all(dir + "/e2e_unchecked");

  // The upstream alone, on the store the end-to-end run left (its view
  // complete: the same pipeline without a snapshot). First its capacity:
  // an offer no machine meets, so the source writes as fast as the pipeline
  // drains. Then the baseline at the load the loaded runs offer.
  log("upstream capacity, no backfill");
  UpstreamRun capacity, baseline;
  double load = 0;
  {
    auto store = OpenStore(dir + "/e2e");
    StreamingJobOptions options = OneActorJob(base, kUnboundedOps);
    options.extra_checkpoints_after_finish = kUpstreamOnlyCheckpoints;
    capacity = RunUpstreamOnly(*store, options);
    load = flags.load.value_or(capacity.ops_per_second / 2);
    log(absl::StrCat("baseline: the upstream alone at ",
                     absl::StrFormat("%.0f", load), " ops/s"));
    options.workload.ops_per_second = load;
    baseline = RunUpstreamOnly(*store, options);
  }

  // Under load, no rate limit.
  log(absl::StrCat("end to end under ", absl::StrFormat("%.0f", load),
                   " upstream ops/s"));
  const StreamingJobOptions loaded_options = OneActorJob(base, load);
  const JobRun loaded = RunJobOnCopy(base_dir, dir + "/loaded", loaded_options);

  // The same run with the no-shuffle backfill (issue 20): the upstream's
  // writer and the backfill in one actor, no buffer, one position.
  log(absl::StrCat("no-shuffle backfill under ",
                   absl::StrFormat("%.0f", load), " upstream ops/s"));
  StreamingJobOptions no_shuffle_options = loaded_options;
  no_shuffle_options.backfill_kind = BackfillKind::kNoShuffle;
  const JobRun no_shuffle =
      RunJobOnCopy(base_dir, dir + "/no_shuffle", no_shuffle_options);

  // And with the snapshot backfill: the table read at one epoch, the
  // changes after it logged in the store and replayed, then joined.
  log(absl::StrCat("snapshot backfill under ", absl::StrFormat("%.0f", load),
                   " upstream ops/s"));
  StreamingJobOptions snapshot_options = loaded_options;
  snapshot_options.backfill_kind = BackfillKind::kSnapshot;
  const JobRun snapshot_kind =
      RunJobOnCopy(base_dir, dir + "/snapshot_kind", snapshot_options);

  // A burst: one epoch with 10x the changes the load brings in an epoch.
  log("a burst of 10x one epoch's upstream changes");
  BurstRun burst;
  {
    const std::string work = dir + "/burst";
    CopyStore(base_dir, work);
    auto store = OpenStore(work);
    burst = OrDie(
        RunBurst(*store, base, 961, flags.rows,
                 static_cast<uint64_t>(
                     load * absl::ToDoubleSeconds(base.barrier_interval))),
        "burst");
  }

  // Under load, adaptive: the target is the baseline's p99 + 10 ms. The
  // controller's floor is a tenth of the unlimited run's snapshot rate, so
  // that this run takes at most ~10x as long as that one (the bench's time
  // budget) instead of the job's default floor of one chunk per 4 barriers.
  const double adaptive_target_ms = baseline.barrier_latency_p99_ms + 10;
  log(absl::StrCat("adaptive rate, target ",
                   absl::StrFormat("%.1f", adaptive_target_ms), " ms"));
  StreamingJobOptions adaptive_options = loaded_options;
  adaptive_options.adaptive_target_barrier_latency =
      absl::Milliseconds(adaptive_target_ms);
  adaptive_options.adaptive_min_rows_per_second = static_cast<uint32_t>(
      std::clamp(SnapshotRate(loaded) / 10, 1.0, 1e9));
  const JobRun adaptive =
      RunJobOnCopy(base_dir, dir + "/adaptive", adaptive_options);

  // The trade-off between the adaptive mode's latency goal and its rate
  // goal: the same job at a fixed half of the unlimited snapshot rate (the
  // rate goal's floor). A p99 over 1.1 x the target here says that in this
  // run the two pull against each other: the tail the backfill adds grows
  // with its rate (ratelimit/README.md). One run's p99: a sign, not a proof.
  const uint32_t half_rate =
      static_cast<uint32_t>(std::clamp(SnapshotRate(loaded) / 2, 1.0, 1e9));
  log(absl::StrCat("fixed at half the unlimited rate: ", half_rate, " rows/s"));
  StreamingJobOptions half_rate_options = loaded_options;
  half_rate_options.rate_limit = RateLimit::Fixed(half_rate);
  const JobRun half_rate_run =
      RunJobOnCopy(base_dir, dir + "/half_rate", half_rate_options);
  const double half_rate_read = SnapshotRate(half_rate_run);

  // Stop-the-world: pause the upstream, copy, resume.
  log("naive: stop the world");
  double stw_blocked = 0;
  {
    const std::string work = dir + "/stw";
    CopyStore(base_dir, work);
    auto store = OpenStore(work);
    auto view_store = OpenStore(dir + "/stw_view");
    const absl::Time paused = absl::Now();
    CopyTable(*store, upstream, store->CommittedEpoch(upstream.table_id),
              *view_store, 951);
    stw_blocked = SecondsSince(paused);
  }

  // Buffer-everything: snapshot at E while every later change is kept in
  // memory; applied once the snapshot is done.
  log("naive: buffer everything");
  size_t buffer_all_peak = 0;
  {
    const std::string work = dir + "/buffer_all";
    CopyStore(base_dir, work);
    auto store = OpenStore(work);
    auto view_store = OpenStore(dir + "/buffer_all_view");
    Mutex mu;
    bool buffering = true;
    std::vector<StreamChunk> buffer;
    size_t bytes = 0;
    StreamingJobOptions options = base;
    options.workload.ops_per_second = load;
    LiveUpstream live(*store, options, [&](const StreamChunk& chunk) {
      MutexLock lock(&mu);
      if (!buffering) return;
      bytes += chunk.EstimatedBytes();
      buffer.push_back(chunk);
    });
    const Epoch snapshot_epoch = store->CommittedEpoch(upstream.table_id);
    live.Start();
    CopyTable(*store, upstream, snapshot_epoch, *view_store, 952);
    {
      MutexLock lock(&mu);
      buffering = false;
      buffer_all_peak = bytes;
    }
    live.Stop();
    // Apply the buffered changes to the view (upsert semantics).
    TableCatalog view = upstream;
    view.table_id = 952;
    StateTableOptions table_options;
    table_options.op_consistency = OpConsistency::kInconsistent;
    auto table = OrDie(
        StateTable::Create(view, *view_store,
                           VnodeBitmap::All(view.vnode_count), table_options),
        "view");
    const Epoch committed = view_store->CommittedEpoch(952);
    const EpochPair epoch{Epoch(committed.value() + 1), committed};
    Check(table->InitEpoch(epoch), "init view");
    for (const StreamChunk& chunk : buffer) {
      for (size_t i = 0; i < chunk.capacity(); ++i) {
        if (!chunk.is_visible(i)) continue;
        const Op op = chunk.op(i);
        Row row = chunk.RowAt(i);
        Check(op == Op::kInsert || op == Op::kUpdateInsert
                  ? table->Insert(std::move(row))
                  : table->Delete(std::move(row)),
              "apply");
      }
    }
    const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
    Check(table->Commit(next), "commit view");
    Check(view_store->Checkpoint(next.prev), "checkpoint view");
  }

  // Cost growth: N and 4N rows, each in its own process, each run long
  // enough to mean something: N is at least --growth_seconds of the 1-actor
  // snapshot rate measured above.
  const uint64_t growth_rows = std::max<uint64_t>(
      flags.rows / 4,
      static_cast<uint64_t>(flags.growth_seconds * snapshot_rate));
  log(absl::StrCat("cost growth: ", growth_rows, " and ", 4 * growth_rows,
                   " rows in child processes"));
  BuildCompactedTable(dir + "/growth_1x", BaseOptions(growth_rows));
  BuildCompactedTable(dir + "/growth_4x", BaseOptions(4 * growth_rows));
  const std::string self = std::filesystem::read_symlink("/proc/self/exe");
  // kGrowthRounds rounds, each an N run then a 4N run: each figure is the
  // median over the rounds, each ratio the median of the rounds' own ratios
  // (as for the scan speed: one pair of runs measured the machine's drift
  // as much as the growth).
  struct GrowthRound {
    ChildRun n, n4;
    double time_ratio() const { return n4.seconds / n.seconds; }
    double rss_ratio() const {
      return static_cast<double>(n4.max_rss_kb) /
             static_cast<double>(n.max_rss_kb);
    }
  };
  std::vector<GrowthRound> growth_rounds;
  for (int round = 0; round < kGrowthRounds; ++round) {
    const TableId progress_table = static_cast<TableId>(900 + round);
    const GrowthRound& r = growth_rounds.emplace_back(GrowthRound{
        RunChild(self, dir + "/growth_1x", upstream.table_id, progress_table),
        RunChild(self, dir + "/growth_4x", upstream.table_id, progress_table)});
    log(absl::StrFormat(
        "  round %d: N %.2f s, %ld KiB; 4N %.2f s, %ld KiB (%.2f, %.2f)",
        round + 1, r.n.seconds, r.n.max_rss_kb, r.n4.seconds, r.n4.max_rss_kb,
        r.time_ratio(), r.rss_ratio()));
  }
  std::filesystem::remove_all(dir + "/growth_1x");
  std::filesystem::remove_all(dir + "/growth_4x");
  const double growth_time_ratio = MedianOver(
      growth_rounds, [](const GrowthRound& r) { return r.time_ratio(); });
  const double growth_rss_ratio = MedianOver(
      growth_rounds, [](const GrowthRound& r) { return r.rss_ratio(); });

  // Cost per vnode: the same table (N/4 rows) and load with 32,768 vnodes
  // and with 256, the loaded job over 2 actors in a child process each.
  const uint64_t vnode_rows = std::max<uint64_t>(flags.rows / 4, 1000);
  log(absl::StrCat("vnode count: ", vnode_rows,
                   " rows with 256 and 32768 vnodes in child processes"));
  BuildCompactedTable(dir + "/vnodes_256",
                      VnodeRunOptions(vnode_rows, 256, load));
  const VnodeRun vnodes_256 =
      RunVnodeChild(self, dir + "/vnodes_256", vnode_rows, 256, load);
  std::filesystem::remove_all(dir + "/vnodes_256");
  BuildCompactedTable(dir + "/vnodes_32768",
                      VnodeRunOptions(vnode_rows, 32768, load));
  const VnodeRun vnodes_32768 =
      RunVnodeChild(self, dir + "/vnodes_32768", vnode_rows, 32768, load);
  std::filesystem::remove_all(dir + "/vnodes_32768");

  // Tombstones: a table whose every other row was deleted vs a clean table
  // of the same live rows, before and after garbage collection. "Before" is
  // the store once RocksDB's own background work is done (the compactions
  // its deletion trigger asks for included) and before any full compaction.
  // Each is the median of the rounds' ratios, the two tables scanned back
  // to back in each round, as for the scan speed above.
  log(absl::StrCat("tombstones: ", flags.speed_rounds, " rounds before and ",
                   flags.speed_rounds, " after GC"));
  double tombstone_before_gc = 0, tombstone_after_gc = 0;
  {
    RocksDbStateStoreOptions options = StoreOptions(dir + "/tombstones");
    options.gc_tombstone_fraction = 0;  // Measured before GC, then after.
    auto store = OrDie(RocksDbStateStore::Open(options), "open");
    TableCatalog churned = upstream;
    churned.table_id = 21;
    TableCatalog clean = upstream;
    clean.table_id = 22;
    WriteRows(*store, base, churned, 0, flags.rows, 1, false);
    WriteRows(*store, base, churned, 0, flags.rows, 2, true);
    WriteRows(*store, base, clean, 1, flags.rows, 2, false);
    TableId progress_table = 931;
    auto ratio_of_rounds = [&](const char* when) {
      std::vector<double> ratios;
      for (uint32_t round = 0; round < flags.speed_rounds; ++round) {
        double rates[2];
        for (int i = 0; i < 2; ++i) {
          rates[i] =
              OrDie(RunSnapshotOnly(*store, i == 0 ? churned : clean, 1,
                                    progress_table++, absl::Milliseconds(100)),
                    "tombstone snapshot")
                  .rows_per_second();
        }
        ratios.push_back(rates[0] / rates[1]);
        log(absl::StrFormat(
            "  %s, round %u: half-deleted %.0f, clean %.0f "
            "(%.2f)",
            when, round + 1, rates[0], rates[1], ratios.back()));
      }
      return Percentile(std::move(ratios), 0.5);
    };
    Check(store->WaitForBackgroundWork(absl::Minutes(2)),
          "RocksDB's background work");
    tombstone_before_gc = ratio_of_rounds("before GC");
    Check(store->Compact(), "compact");
    tombstone_after_gc = ratio_of_rounds("after GC");
  }
  std::filesystem::remove_all(dir);

  // ---- Report.
  const JobResult& lr = loaded.result;
  const double loaded_rate = SnapshotRate(loaded);
  const double loaded_ops = UpstreamRateDuringBackfill(loaded);
  const double adaptive_rate = SnapshotRate(adaptive);
  const double adaptive_ops = UpstreamRateDuringBackfill(adaptive);
  const JobResult& ar = adaptive.result;
  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  // The backfill kinds' runs under the same load, side by side (issue 20),
  // and the figures reported for each.
  const std::pair<BackfillKind, const JobRun*> kind_runs[] = {
      {BackfillKind::kArrangement, &loaded},
      {BackfillKind::kNoShuffle, &no_shuffle},
      {BackfillKind::kSnapshot, &snapshot_kind}};
  auto upstream_ops_ratio = [&](const JobRun& run) {
    return ratio(UpstreamRateDuringBackfill(run), baseline.ops_per_second);
  };
  const double total_seconds = SecondsSince(bench_start);
  JsonObject json;
  json.Add("rows", flags.rows)
      .Add("upstream_load_ops_per_second", load)
      .Add("build_seconds", build_seconds)
      .Add("raw_scan_rows_per_second", raw_rate)
      .Add("snapshot_rows_per_second", snapshot_rate)
      .Add("snapshot_vs_raw_scan", snapshot_vs_raw_scan)
      .Add("end_to_end_rows_per_second", e2e_rate)
      .Add("snapshot_2_actors_rows_per_second", snapshot2_rate)
      .Add("parallel_speedup_2_vs_1", snapshot_speedup)
      .Add("raw_scan_2_threads_rows_per_second", raw2_rate)
      .Add("raw_scan_speedup_2_vs_1", raw_speedup)
      .Add("speed_rounds", flags.speed_rounds)
      .Add("loaded_snapshot_rows_per_second", loaded_rate)
      .Add("loaded_upstream_ops_per_second", loaded_ops)
      .Add("barrier_latency_p50_ms", lr.backfill_barrier_latency_p50_ms)
      .Add("barrier_latency_p99_ms", lr.backfill_barrier_latency_p99_ms)
      .Add("upstream_capacity_ops_per_second", capacity.ops_per_second)
      .Add("baseline_upstream_ops_per_second", baseline.ops_per_second)
      .Add("baseline_barrier_latency_p50_ms", baseline.barrier_latency_p50_ms)
      .Add("baseline_barrier_latency_p99_ms", baseline.barrier_latency_p99_ms)
      .Add("adaptive_target_ms", adaptive_target_ms)
      .Add("adaptive_upstream_ops_ratio",
           ratio(adaptive_ops, baseline.ops_per_second))
      .Add("adaptive_barrier_latency_p99_ms",
           ar.backfill_barrier_latency_p99_ms)
      .Add("adaptive_snapshot_rows_per_second", adaptive_rate)
      .Add("adaptive_vs_unlimited_snapshot", ratio(adaptive_rate, loaded_rate))
      .Add("half_rate_rows_per_second", half_rate)
      .Add("half_rate_snapshot_rows_per_second", half_rate_read)
      .Add("half_rate_vs_unlimited_snapshot",
           ratio(half_rate_read, loaded_rate))
      .Add("half_rate_barrier_latency_p99_ms",
           half_rate_run.result.backfill_barrier_latency_p99_ms)
      .Add("stop_the_world_upstream_blocked_seconds", stw_blocked)
      .Add("buffer_all_peak_bytes", static_cast<uint64_t>(buffer_all_peak))
      .Add("upstream_blocked_seconds", lr.upstream_blocked_seconds)
      .Add("peak_buffer_bytes", lr.peak_buffer_bytes)
      .Add("buffer_vs_buffer_all",
           buffer_all_peak > 0
               ? static_cast<double>(lr.peak_buffer_bytes) / buffer_all_peak
               : 0.0)
      .Add("time_1x_seconds",
           MedianOver(growth_rounds,
                      [](const GrowthRound& r) { return r.n.seconds; }))
      .Add("time_4x_seconds",
           MedianOver(growth_rounds,
                      [](const GrowthRound& r) { return r.n4.seconds; }))
      .Add("time_ratio_4x_vs_1x", growth_time_ratio)
      .Add("rss_1x_kb", static_cast<int64_t>(MedianOver(
                            growth_rounds,
                            [](const GrowthRound& r) {
                              return static_cast<double>(r.n.max_rss_kb);
                            })))
      .Add("rss_4x_kb", static_cast<int64_t>(MedianOver(
                            growth_rounds,
                            [](const GrowthRound& r) {
                              return static_cast<double>(r.n4.max_rss_kb);
                            })))
      .Add("rss_ratio_4x_vs_1x", growth_rss_ratio);
  for (const auto& [kind, run] : kind_runs) {
    const std::string name = BackfillKindName(kind);
    json.Add(name + "_snapshot_rows_per_second", SnapshotRate(*run))
        .Add(name + "_seconds_to_consistent", run->backfill_seconds)
        .Add(name + "_upstream_ops_ratio", upstream_ops_ratio(*run))
        .Add(name + "_barrier_latency_p99_ms",
             run->result.backfill_barrier_latency_p99_ms)
        .Add(name + "_peak_rss_kb", run->peak_rss_kb);
  }
  json.Add("snapshot_log_peak_bytes",
           snapshot_kind.result.peak_snapshot_log_bytes)
      .Add("tombstone_vs_clean", tombstone_after_gc)
      .Add("tombstone_vs_clean_before_gc", tombstone_before_gc)
      .Add("total_seconds", total_seconds);
  // Issue 15: the view's write limit, a burst, the vnode count.
  json.Add("raw_write_rows_per_second", raw_write_rate)
      .Add("end_to_end_vs_raw_write", e2e_vs_raw_write)
      .Add("end_to_end_unchecked_rows_per_second", e2e_unchecked_rate)
      .Add("end_to_end_unchecked_vs_raw_write",
           ratio(e2e_unchecked_rate, raw_write_rate))
      .Add("burst_peak_buffer_bytes", burst.peak_buffer_bytes)
      .Add("burst_buffer_budget_bytes", burst.budget_bytes)
      .Add("burst_buffer_freezes", burst.freezes)
      .Add("growth_rows_1x", growth_rows)
      .Add("vnodes_256_rss_kb", static_cast<int64_t>(vnodes_256.max_rss_kb))
      .Add("vnodes_32768_rss_kb", static_cast<int64_t>(vnodes_32768.max_rss_kb))
      .Add("vnodes_32768_rss_ratio",
           ratio(static_cast<double>(vnodes_32768.max_rss_kb),
                 static_cast<double>(vnodes_256.max_rss_kb)))
      .Add("vnodes_256_barrier_p99_ms", vnodes_256.barrier_latency_p99_ms)
      .Add("vnodes_32768_barrier_p99_ms", vnodes_32768.barrier_latency_p99_ms);

  std::printf("backfill bench: %" PRIu64
              " rows (orders table, 6 columns, 256 vnodes), load %.0f ops/s\n",
              flags.rows, load);
  auto line = [](const char* what, const std::string& value,
                 const std::string& note) {
    std::printf("  %-46s %16s  %s\n", what, value.c_str(), note.c_str());
  };
  auto rate = [](double r) { return absl::StrFormat("%.0f", r); };
  line("raw RocksDB scan + decode (limit), rows/s", rate(raw_rate), "");
  line("snapshot, 1 actor, rows/s", rate(snapshot_rate),
       absl::StrFormat("%.2f of raw (goal >= 0.8)", snapshot_vs_raw_scan));
  line("snapshot, 2 actors, rows/s", rate(snapshot2_rate),
       absl::StrFormat("speedup %.2f (goal >= 1.9)", snapshot_speedup));
  line("raw scan + decode, 2 threads, rows/s", rate(raw2_rate),
       absl::StrFormat("speedup %.2f (this machine's ceiling)", raw_speedup));
  line("end to end (view in RocksDB), rows/s", rate(e2e_rate), "");
  line("upstream alone: capacity, ops/s", rate(capacity.ops_per_second),
       flags.load.has_value() ? "" : "(the load offered is half of it)");
  line("upstream alone at the load: ops/s", rate(baseline.ops_per_second),
       absl::StrFormat("offered %.0f", load));
  line("upstream alone: barrier latency p50 / p99, ms",
       absl::StrFormat("%.1f / %.1f", baseline.barrier_latency_p50_ms,
                       baseline.barrier_latency_p99_ms),
       "(the baseline)");
  line("under load: snapshot rows/s", rate(loaded_rate), "");
  line("under load: upstream ops/s", rate(loaded_ops),
       absl::StrFormat("%.2f of the baseline",
                       ratio(loaded_ops, baseline.ops_per_second)));
  line("barrier latency in backfill p50 / p99, ms",
       absl::StrFormat("%.1f / %.1f", lr.backfill_barrier_latency_p50_ms,
                       lr.backfill_barrier_latency_p99_ms),
       "");
  line("adaptive: snapshot rows/s", rate(adaptive_rate),
       absl::StrFormat("%.2f of unlimited (goal >= 0.5)",
                       ratio(adaptive_rate, loaded_rate)));
  line("adaptive: upstream ops/s", rate(adaptive_ops),
       absl::StrFormat("%.2f of the baseline (goal >= 0.9)",
                       ratio(adaptive_ops, baseline.ops_per_second)));
  line("adaptive: barrier latency p99 / target, ms",
       absl::StrFormat("%.1f / %.1f", ar.backfill_barrier_latency_p99_ms,
                       adaptive_target_ms),
       "(goal p99 <= 1.1 x target)");
  line("fixed at half the unlimited rate: p99, ms",
       absl::StrFormat("%.1f",
                       half_rate_run.result.backfill_barrier_latency_p99_ms),
       absl::StrFormat(
           "reading %.2f of unlimited; %s", ratio(half_rate_read, loaded_rate),
           half_rate_run.result.backfill_barrier_latency_p99_ms >
                   1.1 * adaptive_target_ms
               ? "over 1.1 x target: latency and rate goals pull apart here"
               : "within 1.1 x target"));
  // One figure of each kind's run, "a / b / c" with `decimals` decimals.
  auto per_kind = [&](int decimals, auto figure) {
    std::string out;
    for (const auto& [kind, run] : kind_runs) {
      absl::StrAppend(&out, out.empty() ? "" : " / ",
                      absl::StrFormat("%.*f", decimals,
                                      static_cast<double>(figure(*run))));
    }
    return out;
  };
  line("side by side: snapshot rows/s, arrangement / no-shuffle / snapshot",
       per_kind(0, SnapshotRate), "");
  line("  seconds to a consistent view",
       per_kind(1, [](const JobRun& run) { return run.backfill_seconds; }),
       "");
  line("  upstream ops/s vs the baseline", per_kind(2, upstream_ops_ratio), "");
  line("  barrier latency p99, ms",
       per_kind(1,
                [](const JobRun& run) {
                  return run.result.backfill_barrier_latency_p99_ms;
                }),
       "");
  line("  peak RSS, KiB",
       per_kind(0, [](const JobRun& run) { return run.peak_rss_kb; }), "");
  line("  snapshot backfill: log peak, bytes",
       absl::StrFormat("%d", snapshot_kind.result.peak_snapshot_log_bytes),
       "");
  line("upstream blocked: ours / stop-the-world, s",
       absl::StrFormat("%.3f / %.2f", lr.upstream_blocked_seconds, stw_blocked),
       "(goal: ours <= 0.001)");
  line("peak buffer: ours / buffer-everything, bytes",
       absl::StrFormat("%" PRIu64 " / %zu", lr.peak_buffer_bytes,
                       buffer_all_peak),
       "(goal <= 1/10)");
  line("cost growth 4N vs N: time, RSS",
       absl::StrFormat("%.2f, %.2f", growth_time_ratio, growth_rss_ratio),
       "(goals <= 4.4, <= 1.3)");
  line("tombstones vs clean: after GC / before GC",
       absl::StrFormat("%.2f / %.2f", tombstone_after_gc, tombstone_before_gc),
       "(goal >= 0.5)");
  line("raw RocksDB write of the view (limit), rows/s", rate(raw_write_rate),
       absl::StrFormat("end to end: %.2f of it (goal >= 0.5)",
                       e2e_vs_raw_write));
  line("end to end, unchecked view writes, rows/s", rate(e2e_unchecked_rate),
       absl::StrFormat("%.2f of the raw write, %.2f x checked",
                       ratio(e2e_unchecked_rate, raw_write_rate),
                       ratio(e2e_unchecked_rate, e2e_rate)));
  line("burst of 10x: peak buffer / budget, bytes",
       absl::StrFormat("%" PRIu64 " / %" PRIu64, burst.peak_buffer_bytes,
                       burst.budget_bytes),
       burst.snapshot_active
           ? absl::StrFormat("%" PRIu64 " freezes (goal <= budget)",
                             burst.freezes)
           : std::string("(the snapshot ended first: the table is too small)"));
  line("32768 vs 256 vnodes: RSS ratio, p99 ms",
       absl::StrFormat("%.2f, %.1f",
                       ratio(static_cast<double>(vnodes_32768.max_rss_kb),
                             static_cast<double>(vnodes_256.max_rss_kb)),
                       vnodes_32768.barrier_latency_p99_ms),
       absl::StrFormat("(goals <= 1.3, <= %.1f + 10)",
                       vnodes_256.barrier_latency_p99_ms));
  line("total run, s", absl::StrFormat("%.0f", total_seconds), "(goal <= 900)");
  if (!flags.plot.empty()) {
    Plot(flags.plot, {&loaded.timeline, loaded.backfill_seconds},
         {&adaptive.timeline, adaptive.backfill_seconds}, adaptive_target_ms);
  }
  if (flags.json) std::printf("%s\n", json.ToString().c_str());
  return 0;
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) { return backfill::Main(argc, argv); }
