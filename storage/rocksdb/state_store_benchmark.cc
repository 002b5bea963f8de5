// State store benchmark (RocksDB, warm cache). Prints a summary table.
//
//   bazel run --config=opt //storage:state_store_benchmark -- [rows] [dir]
//
// 1M rows (8-byte pks, 40-byte values ~ 4 columns) over 256 vnodes:
//  (a) a raw RocksDB iterator over the same keys, summing value bytes: the
//      physical limit; (b) a full scan through StateStoreIterator over all
//      256 vnodes (committed and through a LocalStateStore), same work;
//  write throughput through LocalStateStore + Checkpoint; point-get rate;
//  a table where half the rows were deleted after being written (tombstones)
//  vs a clean table with the same live rows.
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "rocksdb/db.h"
#include "rocksdb/iterator.h"
#include "storage/benchmark_rows.h"
#include "storage/rocksdb/raw_rocksdb_for_test.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "storage/table_key.h"

namespace backfill {
namespace {

using benchmark_rows::kVnodes;
using benchmark_rows::Pk;
using benchmark_rows::SumBytes;
using benchmark_rows::Value;
using benchmark_rows::VnodeOf;

constexpr TableId kMain = 1;
constexpr TableId kChurned = 2;
constexpr TableId kClean = 3;

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

void Check(const absl::Status& status, const char* what) {
  if (!status.ok()) {
    std::fprintf(stderr, "%s: %s\n", what, status.ToString().c_str());
    std::exit(1);
  }
}

// Writes rows [0, num_rows) of `table` where keep(row), checkpointing every
// 100k rows; returns rows/s.
double Write(StateStore& store, TableId table, uint64_t num_rows, Epoch* epoch,
             bool (*keep)(uint64_t)) {
  auto local = store.NewLocalStateStore(table, {});
  Check(local.status(), "local");
  Check((*local)->Init(EpochPair{*epoch, Epoch(epoch->value() - 1)}), "init");
  const auto start = std::chrono::steady_clock::now();
  uint64_t written = 0;
  for (uint64_t row = 0; row < num_rows; ++row) {
    if (!keep(row)) continue;
    Check((*local)->Insert(VnodeOf(row), Pk(row), Value(row)), "insert");
    if (++written % 100000 == 0 || row + 1 == num_rows) {
      Check((*local)->Seal((EpochPair{Epoch(epoch->value() + 1), *epoch})),
            "seal");
      Check(store.Checkpoint(*epoch), "checkpoint");
      *epoch = Epoch(epoch->value() + 1);
    }
  }
  if (written % 100000 != 0) {
    Check((*local)->Seal((EpochPair{Epoch(epoch->value() + 1), *epoch})),
          "seal");
    Check(store.Checkpoint(*epoch), "checkpoint");
    *epoch = Epoch(epoch->value() + 1);
  }
  return written / Seconds(start);
}

// Full scan of a table through the committed API; returns rows/s.
double ScanCommitted(StateStore& store, TableId table, uint64_t* rows_out,
                     uint64_t* sum_out) {
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<benchmark_rows::ScanTotals> totals =
      benchmark_rows::ScanCommitted(store, table);
  Check(totals.status(), "scan");
  *rows_out = totals->rows;
  *sum_out = totals->value_byte_sum;
  return totals->rows / Seconds(start);
}

double ScanLocal(StateStore& store, TableId table, Epoch epoch,
                 uint64_t* rows_out) {
  auto local =
      store.NewLocalStateStore(table, LocalOptions{.replicated = true});
  Check(local.status(), "local");
  Check((*local)->Init(EpochPair{epoch, Epoch(epoch.value() - 1)}), "init");
  const auto start = std::chrono::steady_clock::now();
  uint64_t rows = 0, sum = 0;
  for (int vnode = 0; vnode < kVnodes; ++vnode) {
    auto it =
        (*local)->NewIterator(static_cast<VirtualNode>(vnode), PkRange::All());
    Check(it.status(), "iterator");
    for ((*it)->SeekToFirst(); (*it)->Valid(); (*it)->Next()) {
      sum += SumBytes((*it)->value());
      ++rows;
    }
  }
  *rows_out = rows + (sum == 42 ? 1 : 0);
  return rows / Seconds(start);
}

double ScanRaw(const std::string& path, uint64_t* rows_out, uint64_t* sum_out) {
  std::unique_ptr<raw_rocksdb_for_test::RawDb> raw;
  if (!raw_rocksdb_for_test::Open(path, 512 << 20, &raw).ok()) std::exit(1);
  double best = 0;
  for (int pass = 0; pass < 3; ++pass) {  // Pass 0 warms the cache.
    const auto start = std::chrono::steady_clock::now();
    std::unique_ptr<rocksdb::Iterator> it(
        raw->db->NewIterator(rocksdb::ReadOptions(), raw->data()));
    uint64_t rows = 0, sum = 0;
    // Only the main table (table id 1): bound like our scan.
    std::string lower = Pk(0).substr(0, 0);
    AppendTableKeyPrefix(kMain, 0, &lower);
    for (it->Seek(lower); it->Valid(); it->Next()) {
      const rocksdb::Slice key = it->key();
      if (static_cast<unsigned char>(key[3]) != kMain) break;
      const rocksdb::Slice value = it->value();
      sum += SumBytes(absl::string_view(value.data() + 1, value.size() - 1));
      ++rows;
    }
    *rows_out = rows;
    *sum_out = sum;
    if (pass > 0) best = std::max(best, rows / Seconds(start));
  }
  return best;
}

int Main(int argc, char** argv) {
  const uint64_t num_rows =
      argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1000000;
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path =
      argc > 2 ? argv[2]
               : std::string(tmp ? tmp : "/tmp") + "/state_store_benchmark";
  std::filesystem::remove_all(path);
  RocksDbStateStoreOptions options;
  options.path = path;
  options.block_cache_bytes = 512 << 20;
  options.sync_on_checkpoint = false;
  // The tombstone scan is measured before and after garbage collection; the
  // full compaction that automatic GC would schedule is run explicitly so
  // the "before" figure is not raced by a background compaction.
  options.gc_tombstone_fraction = 0;

  double write_rate = 0, churn_scan = 0, clean_scan = 0;
  Epoch epoch(1);
  {
    auto store = RocksDbStateStore::Open(options);
    Check(store.status(), "open");
    write_rate =
        Write(**store, kMain, num_rows, &epoch, [](uint64_t) { return true; });
    Check((*store)->Compact(), "compact");
  }
  uint64_t raw_rows = 0, raw_sum = 0;
  const double raw_rate = ScanRaw(path, &raw_rows, &raw_sum);

  auto store_or = RocksDbStateStore::Open(options);
  Check(store_or.status(), "open");
  RocksDbStateStore& store = **store_or;
  epoch = Epoch(store.CommittedEpoch(kMain).value() + 1);
  uint64_t rows = 0, sum = 0;
  double ours = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const double rate = ScanCommitted(store, kMain, &rows, &sum);
    if (pass > 0) ours = std::max(ours, rate);
  }
  if (rows != raw_rows || sum != raw_sum) {
    std::fprintf(stderr, "scan mismatch: %" PRIu64 "/%" PRIu64 " rows\n", rows,
                 raw_rows);
    return 1;
  }
  uint64_t local_rows = 0;
  double local_rate = 0;
  for (int pass = 0; pass < 2; ++pass) {
    local_rate =
        std::max(local_rate, ScanLocal(store, kMain, epoch, &local_rows));
  }

  // Point gets (committed).
  std::mt19937_64 rng(1);
  const int kGets = 200000;
  auto start = std::chrono::steady_clock::now();
  uint64_t found = 0;
  for (int i = 0; i < kGets; ++i) {
    const uint64_t row = rng() % num_rows;
    auto value =
        store.Get(TableKey{kMain, VnodeOf(row), Pk(row)}, Epoch::Max());
    Check(value.status(), "get");
    found += value->has_value();
  }
  const double get_rate = kGets / Seconds(start);

  // Tombstones: write all rows, then delete every other one (no full
  // compaction afterwards: the tombstones stay) vs a clean table.
  Write(store, kChurned, num_rows, &epoch, [](uint64_t) { return true; });
  {
    auto local = store.NewLocalStateStore(kChurned, {});
    Check(local.status(), "local");
    Check((*local)->Init(EpochPair{epoch, Epoch(epoch.value() - 1)}), "init");
    for (uint64_t row = 0; row < num_rows; row += 2) {
      Check((*local)->Delete(VnodeOf(row), Pk(row)), "delete");
    }
    Check((*local)->Seal(EpochPair{Epoch(epoch.value() + 1), epoch}), "seal");
    Check(store.Checkpoint(epoch), "checkpoint");
    epoch = Epoch(epoch.value() + 1);
  }
  Write(store, kClean, num_rows, &epoch,
        [](uint64_t row) { return row % 2 == 1; });
  uint64_t churn_rows = 0, clean_rows = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const double a = ScanCommitted(store, kChurned, &churn_rows, &sum);
    const double b = ScanCommitted(store, kClean, &clean_rows, &sum);
    if (pass > 0) {
      churn_scan = std::max(churn_scan, a);
      clean_scan = std::max(clean_scan, b);
    }
  }
  auto versions = store.CountStoredVersions();
  Check(versions.status(), "count");
  Check(store.Compact(), "compact (what automatic GC runs)");
  auto versions_after_gc = store.CountStoredVersions();
  Check(versions_after_gc.status(), "count");
  // Both tables compacted now: compare them again.
  double gc_scan = 0, gc_clean_scan = 0;
  for (int pass = 0; pass < 3; ++pass) {
    const double a = ScanCommitted(store, kChurned, &churn_rows, &sum);
    const double b = ScanCommitted(store, kClean, &clean_rows, &sum);
    if (pass > 0) {
      gc_scan = std::max(gc_scan, a);
      gc_clean_scan = std::max(gc_clean_scan, b);
    }
  }

  std::printf("state store benchmark: %" PRIu64
              " rows, 8-byte pks, 40-byte values, %d vnodes\n",
              num_rows, kVnodes);
  std::printf("%-52s %14s %8s\n", "measure", "rows/s", "ratio");
  std::printf("%-52s %14.0f %8s\n",
              "(a) raw RocksDB iterator + sum bytes (limit)", raw_rate, "1.00");
  std::printf("%-52s %14.0f %8.2f\n",
              "(b) StateStore committed scan, 256 vnodes", ours,
              ours / raw_rate);
  std::printf("%-52s %14.0f %8.2f\n",
              "(b') LocalStateStore scan (empty overlays)", local_rate,
              local_rate / raw_rate);
  std::printf("%-52s %14.0f %8s\n",
              "write: LocalStateStore Insert + Checkpoint/100k", write_rate,
              "");
  std::printf("%-52s %14.0f %8s\n", "point get (committed, random, warm)",
              get_rate, "");
  std::printf("%-52s %14.0f %8.2f\n",
              "scan, half deleted (tombstones) [live rows/s]", churn_scan,
              churn_scan / clean_scan);
  std::printf("%-52s %14.0f %8.2f\n",
              "  the same after GC's full compaction (both tables)", gc_scan,
              gc_scan / gc_clean_scan);
  std::printf("%-52s %14.0f %8s\n", "scan, clean table with the same live rows",
              clean_scan, "1.00");
  std::printf("rows: raw %" PRIu64 ", ours %" PRIu64 ", local %" PRIu64
              ", churned %" PRIu64 ", clean %" PRIu64 "; gets found %" PRIu64
              "/%d; stored versions %" PRIu64 ", after GC %" PRIu64 "\n",
              raw_rows, rows, local_rows, churn_rows, clean_rows, found, kGets,
              *versions, *versions_after_gc);
  return 0;
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) { return backfill::Main(argc, argv); }
