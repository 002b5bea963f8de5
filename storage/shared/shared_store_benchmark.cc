// The shared store against the RocksDB store, in one run (issue 18): the
// same rows written through the same StateStore interface into each, then
//  * checkpoint latency: each Checkpoint call timed, for the load's large
//    checkpoints and for a run of small ones (what a job at a 100 ms barrier
//    interval and a few thousand changes per checkpoint makes);
//  * a committed full scan (256 vnodes, every value's bytes summed), twice:
//    the first scan of the shared store fetches its SST objects into the
//    local cache, the second reads them from there;
// and the ratios shared / RocksDB. Each store runs with its defaults, as
// `//tools:backfill --store=...` does (RocksDB syncs its WAL at each
// checkpoint; the shared store uploads one SST per checkpoint and commits
// the version with one etcd transaction; its maintenance thread compacts
// when due, outside the timed calls).
//
//   bazel run -c opt //storage/shared:shared_store_benchmark -- [--json]
//       [--rows=1000000] [--object_store=DIR|s3://BUCKET] [--etcd=H:P,...]
//
// Without --etcd a local 3-member etcd cluster is started for the run and
// stopped after (etcd-server must be installed: tools/setup.sh).
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "storage/benchmark_rows.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "storage/shared/shared_state_store.h"
#include "storage/shared/shared_store_backend.h"
#include "storage/state_store.h"

ABSL_FLAG(uint64_t, rows, 1000000, "Rows loaded into each store (>= 1000).");
ABSL_FLAG(uint64_t, load_checkpoints, 10,
          "Checkpoints the load is split into (rows / this rows each).");
ABSL_FLAG(uint64_t, small_checkpoints, 100,
          "Small checkpoints after the load, --small_rows rows each.");
ABSL_FLAG(uint64_t, small_rows, 2000, "Rows of each small checkpoint.");
ABSL_FLAG(std::string, dir, "",
          "Working directory (removed and recreated); empty: "
          "/tmp/shared_store_benchmark.");
ABSL_FLAG(std::string, object_store, "",
          "The shared store's objects: a directory or s3://BUCKET[/PREFIX] "
          "(S3 credentials from AWS_* variables); empty: DIR/objects.");
ABSL_FLAG(std::string, etcd, "",
          "etcd endpoints HOST:PORT,...; empty: a local 3-member cluster.");
ABSL_FLAG(bool, json, false, "End with one JSON line of every figure.");

namespace backfill {
namespace {

using benchmark_rows::kVnodes;
using benchmark_rows::Pk;
using benchmark_rows::SumBytes;
using benchmark_rows::Value;
using benchmark_rows::VnodeOf;

constexpr TableId kTable = 1;

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void Check(const absl::Status& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "shared_store_benchmark: %s: %s\n", what,
                 status.ToString().c_str());
    std::exit(1);
  }
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t index = std::min(
      values.size() - 1, static_cast<size_t>(p * (values.size() - 1) + 0.5));
  return values[index];
}

struct Figures {
  double load_rows_per_second = 0;
  std::vector<double> load_checkpoint_ms;
  std::vector<double> small_checkpoint_ms;
  double first_scan_rows_per_second = 0;
  double scan_rows_per_second = 0;
};

// Writes rows [first, end) in `checkpoints` checkpoints of equal size,
// timing each Checkpoint call into *latencies_ms.
void Write(StateStore& store, LocalStateStore& local, uint64_t first,
           uint64_t end, uint64_t checkpoints, Epoch* epoch,
           std::vector<double>* latencies_ms) {
  const uint64_t per = std::max<uint64_t>(1, (end - first) / checkpoints);
  for (uint64_t row = first; row < end;) {
    const uint64_t stop = std::min(end, row + per);
    for (; row < stop; ++row) {
      Check(local.Insert(VnodeOf(row), Pk(row), Value(row)), "insert");
    }
    Check(local.Seal(EpochPair{Epoch(epoch->value() + 1), *epoch}), "seal");
    const auto start = Clock::now();
    Check(store.Checkpoint(*epoch), "checkpoint");
    latencies_ms->push_back(Seconds(start) * 1e3);
    *epoch = Epoch(epoch->value() + 1);
  }
}

// A committed full scan; returns rows/s. Exits if the row count or the
// bytes differ from what was written (a scan that reads nothing is fast).
double Scan(StateStore& store, uint64_t expected_rows,
            uint64_t expected_sum) {
  const auto start = Clock::now();
  absl::StatusOr<benchmark_rows::ScanTotals> totals =
      benchmark_rows::ScanCommitted(store, kTable);
  Check(totals.status(), "scan");
  const double rate = totals->rows / Seconds(start);
  const uint64_t rows = totals->rows, sum = totals->value_byte_sum;
  if (rows != expected_rows || sum != expected_sum) {
    std::fprintf(stderr,
                 "shared_store_benchmark: scan read %" PRIu64
                 " rows (sum %" PRIu64 "), wrote %" PRIu64 " (sum %" PRIu64
                 ")\n",
                 rows, sum, expected_rows, expected_sum);
    std::exit(1);
  }
  return rate;
}

Figures Run(StateStore& store, uint64_t rows) {
  Figures figures;
  auto local = store.NewLocalStateStore(kTable, {});
  Check(local.status(), "local state store");
  Epoch epoch(2);
  Check((*local)->Init(EpochPair::ForInitial(epoch)), "init");
  const auto start = Clock::now();
  Write(store, **local, 0, rows, absl::GetFlag(FLAGS_load_checkpoints),
        &epoch, &figures.load_checkpoint_ms);
  figures.load_rows_per_second = rows / Seconds(start);
  const uint64_t small = absl::GetFlag(FLAGS_small_checkpoints);
  const uint64_t small_rows = absl::GetFlag(FLAGS_small_rows);
  Write(store, **local, rows, rows + small * small_rows, small, &epoch,
        &figures.small_checkpoint_ms);
  const uint64_t total = rows + small * small_rows;
  uint64_t sum = 0;
  for (uint64_t row = 0; row < total; ++row) sum += SumBytes(Value(row));
  figures.first_scan_rows_per_second = Scan(store, total, sum);
  figures.scan_rows_per_second = Scan(store, total, sum);
  return figures;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "the shared store (object store + etcd) against the RocksDB store: "
      "checkpoint latency and committed scan rate, one run "
      "(storage/shared/README.md)");
  absl::ParseCommandLine(argc, argv);
  const uint64_t rows = absl::GetFlag(FLAGS_rows);
  if (rows < 1000 || absl::GetFlag(FLAGS_load_checkpoints) == 0) {
    std::fprintf(stderr,
                 "shared_store_benchmark: --rows must be >= 1000 and "
                 "--load_checkpoints >= 1\n");
    return 2;
  }
  std::string dir = absl::GetFlag(FLAGS_dir);
  if (dir.empty()) dir = "/tmp/shared_store_benchmark";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);

  std::printf("[rocksdb] %" PRIu64 " rows\n", rows);
  std::fflush(stdout);
  Figures rocks;
  {
    RocksDbStateStoreOptions options;
    options.path = dir + "/rocksdb";
    auto store = RocksDbStateStore::Open(options);
    Check(store.status(), "open the RocksDB store");
    rocks = Run(**store, rows);
  }

  std::printf("[shared] %" PRIu64 " rows\n", rows);
  std::fflush(stdout);
  Figures shared;
  {
    SharedStoreBackendOptions options;
    options.object_store = absl::GetFlag(FLAGS_object_store).empty()
                               ? dir + "/objects"
                               : absl::GetFlag(FLAGS_object_store);
    if (!absl::GetFlag(FLAGS_etcd).empty()) {
      auto endpoints = ParseEtcdEndpoints(absl::GetFlag(FLAGS_etcd));
      Check(endpoints.status(), "--etcd");
      options.etcd_endpoints = *endpoints;
    }
    options.local_etcd_dir = dir + "/etcd";
    options.etcd_prefix = "shared_store_benchmark/";
    options.cache_dir = dir + "/cache";
    auto backend = SharedStoreBackend::Start(options);
    Check(backend.status(), "start the shared store's backend");
    {
      auto store = SharedStateStore::Open((*backend)->store_options());
      Check(store.status(), "open the shared store");
      shared = Run(**store, rows);
    }
  }

  auto ratio = [](double a, double b) { return b > 0 ? a / b : 0.0; };
  const double rocks_load_p50 = Percentile(rocks.load_checkpoint_ms, 0.5);
  const double shared_load_p50 = Percentile(shared.load_checkpoint_ms, 0.5);
  const double rocks_small_p50 = Percentile(rocks.small_checkpoint_ms, 0.5);
  const double shared_small_p50 = Percentile(shared.small_checkpoint_ms, 0.5);
  const double rocks_small_p99 = Percentile(rocks.small_checkpoint_ms, 0.99);
  const double shared_small_p99 =
      Percentile(shared.small_checkpoint_ms, 0.99);
  const uint64_t load_rows = rows / absl::GetFlag(FLAGS_load_checkpoints);
  std::printf("shared store vs RocksDB store: %" PRIu64
              " rows (8-byte pks, 40-byte values, %d vnodes)\n",
              rows, kVnodes);
  std::printf("  %-44s %12s %12s %8s\n", "", "rocksdb", "shared", "ratio");
  auto line = [&](const std::string& what, double a, double b) {
    std::printf("  %-44s %12.1f %12.1f %8.2f\n", what.c_str(), a, b,
                ratio(b, a));
  };
  line("load, rows/s", rocks.load_rows_per_second,
       shared.load_rows_per_second);
  line(absl::StrFormat("checkpoint of %" PRIu64 " rows p50, ms", load_rows),
       rocks_load_p50, shared_load_p50);
  line(absl::StrFormat("checkpoint of %" PRIu64 " rows p50, ms",
                       absl::GetFlag(FLAGS_small_rows)),
       rocks_small_p50, shared_small_p50);
  line(absl::StrFormat("checkpoint of %" PRIu64 " rows p99, ms",
                       absl::GetFlag(FLAGS_small_rows)),
       rocks_small_p99, shared_small_p99);
  line("committed scan, first, rows/s", rocks.first_scan_rows_per_second,
       shared.first_scan_rows_per_second);
  line("committed scan, again, rows/s", rocks.scan_rows_per_second,
       shared.scan_rows_per_second);
  if (absl::GetFlag(FLAGS_json)) {
    std::printf(
        "{\"rows\":%" PRIu64
        ",\"rocksdb_load_rows_per_second\":%.1f"
        ",\"shared_load_rows_per_second\":%.1f"
        ",\"rocksdb_load_checkpoint_p50_ms\":%.3f"
        ",\"shared_load_checkpoint_p50_ms\":%.3f"
        ",\"rocksdb_small_checkpoint_p50_ms\":%.3f"
        ",\"shared_small_checkpoint_p50_ms\":%.3f"
        ",\"rocksdb_small_checkpoint_p99_ms\":%.3f"
        ",\"shared_small_checkpoint_p99_ms\":%.3f"
        ",\"small_checkpoint_p50_ratio\":%.3f"
        ",\"rocksdb_scan_rows_per_second\":%.1f"
        ",\"shared_first_scan_rows_per_second\":%.1f"
        ",\"shared_scan_rows_per_second\":%.1f"
        ",\"scan_ratio\":%.3f}\n",
        rows, rocks.load_rows_per_second, shared.load_rows_per_second,
        rocks_load_p50, shared_load_p50, rocks_small_p50, shared_small_p50,
        rocks_small_p99, shared_small_p99,
        ratio(shared_small_p50, rocks_small_p50), rocks.scan_rows_per_second,
        shared.first_scan_rows_per_second, shared.scan_rows_per_second,
        ratio(shared.scan_rows_per_second, rocks.scan_rows_per_second));
  }
  std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) { return backfill::Main(argc, argv); }
