// Fuzzes plan nodes after parsing: the input is a binary
// proto::ArrangementBackfillNode. Properties:
//  1. BuildArrangementBackfillFromPlan either fails with InvalidArgument or
//     builds an executor.
//  2. A plan that builds runs correctly: driven as the runtime would
//     (BackfillHarness over a memory store, the plan's own builder making the
//     actor) through a few epochs of random upstream rows and changes, SPEC
//     §5's invariant holds after every barrier, and after a crash the actor
//     restarts from what it persisted and keeps it.
// Upstreams with more than 256 vnodes or 16 columns are only built (property
// 1), to keep every run around a millisecond.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "executor/backfill/arrangement_backfill_plan.h"
#include "executor/backfill/plan.pb.h"
#include "executor/testing/backfill_harness.h"
#include "executor/testing/random_table.h"
#include "executor/testing/scripted_executor.h"
#include "google/protobuf/stubs/logging.h"
#include "serde/random_datum.h"
#include "serde/vnode_bitmap.h"
#include "storage/memory_state_store.h"
#include "storage/table_catalog.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/fuzzing/fuzz_check.h"

namespace backfill {
namespace {

constexpr int kMaxDrivenVnodes = 256;
constexpr size_t kMaxDrivenColumns = 16;

// `row` with its NULLs in NOT NULL columns replaced (the random_table
// helpers ignore nullability).
Row Valid(const TableCatalog& catalog, Row row, std::mt19937_64& rng) {
  for (size_t c = 0; c < row.size(); ++c) {
    if (!catalog.columns[c].nullable && IsNull(row[c])) {
      row[c] = RandomValue(catalog.columns[c].type, rng);
    }
  }
  return row;
}

// Random upstream changes for one epoch with snapshot-read opportunities.
void EpochDml(testing::BackfillHarness& h, std::mt19937_64& rng) {
  const TableCatalog& catalog = h.upstream_table().catalog();
  const int ops = static_cast<int>(rng() % 8);
  for (int i = 0; i < ops; ++i) {
    const auto& rows = h.upstream_rows();
    const uint64_t kind = rng() % 8;
    if (kind < 4 || rows.empty()) {
      const Row row = Valid(
          catalog, testing::RandomTableRow(catalog, rng, /*key_space=*/8), rng);
      const std::string pk = h.upstream_table().pk_serde().Serialize(
          ProjectRow(row, catalog.pk_indices));
      // Rejected rows (a vnode column value out of range) are skipped.
      if (!rows.contains(pk)) h.Insert(row).IgnoreError();
    } else {
      auto it = rows.begin();
      std::advance(it, static_cast<long>(rng() % rows.size()));
      const Row existing = it->second;
      absl::Status status =
          kind < 6 ? h.Delete(existing)
                   : h.Update(existing, Valid(catalog,
                                              testing::RandomValueChange(
                                                  catalog, existing, rng),
                                              rng));
      FuzzCheck(status.ok(), "changing an upstream row", status);
    }
    if (rng() % 3 == 0) h.PushPending(1 + static_cast<int>(rng() % 3));
  }
  h.PushPending(1 + static_cast<int>(rng() % 4));
}

void Drive(const proto::ArrangementBackfillNode& node, uint64_t seed) {
  absl::StatusOr<TableCatalog> upstream =
      TableCatalogFromProto(node.upstream_table());
  FuzzCheck(upstream.ok(), "a plan that builds has a valid upstream",
            upstream.status());
  if (upstream->vnode_count > kMaxDrivenVnodes ||
      upstream->columns.size() > kMaxDrivenColumns) {
    if (FuzzVerbose()) std::printf("built, too large to drive\n");
    return;
  }
  testing::HarnessOptions options;
  options.upstream = *upstream;
  options.s2_column_ids.assign(node.upstream_column_ids().begin(),
                               node.upstream_column_ids().end());
  for (uint32_t index : node.output_indices()) {
    options.backfill.output_indices.push_back(static_cast<int>(index));
  }
  options.backfill.actor_id = node.actor_id();
  if (!node.vnode_bitmap().empty()) {
    absl::StatusOr<VnodeBitmap> owned =
        VnodeBitmap::Deserialize(node.vnode_bitmap());
    FuzzCheck(owned.ok(), "a plan that builds has a valid bitmap",
              owned.status());
    options.owned = *std::move(owned);
  }
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  options.make_executor = [&node, &store](
                              BoxedExecutor input, ProgressReporter* reporter,
                              BackfillMetrics* metrics, Clock* clock) {
    ArrangementBackfillDeps deps;
    deps.reporter = reporter;
    deps.metrics = metrics;
    deps.clock = clock;
    return BuildArrangementBackfillFromPlan(node, *store, std::move(input),
                                            deps);
  };
  SimulatedClock clock;
  std::mt19937_64 rng(seed);
  const std::optional<VnodeBitmap> owned = options.owned;
  absl::StatusOr<std::unique_ptr<testing::BackfillHarness>> created =
      testing::BackfillHarness::Create(*store, clock, options);
  FuzzCheck(created.ok(), "a plan that builds builds again", created.status());
  testing::BackfillHarness& h = **created;
  const int initial_rows = static_cast<int>(rng() % 24);
  for (int i = 0; i < initial_rows; ++i) {
    const Row row =
        Valid(*upstream,
              testing::RandomTableRow(*upstream, rng, /*key_space=*/8), rng);
    const std::string pk = h.upstream_table().pk_serde().Serialize(
        ProjectRow(row, upstream->pk_indices));
    if (!h.upstream_rows().contains(pk)) h.Insert(row).IgnoreError();
  }
  absl::Status status = h.StartBackfill();
  FuzzCheck(status.ok(), "the first barrier", status);
  // Six epochs (the backfill may finish at any point, then it only forwards
  // upstream changes); a crash after the second and the fifth.
  int epoch = 0;
  for (; epoch < 6; ++epoch) {
    EpochDml(h, rng);
    status = h.Barrier(rng() % 3 == 0 ? BarrierKind::kBarrier
                                      : BarrierKind::kCheckpoint);
    FuzzCheck(status.ok(), "the invariant holds after a barrier", status);
    if (epoch == 1 || epoch == 4) {
      if (FuzzVerbose()) {
        std::printf("  crash at epoch %d (%s)\n", epoch,
                    h.finished() ? "finished" : "backfilling");
      }
      h.Crash();
      status = h.Restart(owned);
      FuzzCheck(status.ok(), "a restart", status);
      status = h.Barrier();
      FuzzCheck(status.ok(), "the restarted actor loads its progress", status);
    }
  }
  if (FuzzVerbose()) {
    std::printf("driven: %d rows, %d epochs, %s, view %zu rows\n",
                static_cast<int>(h.upstream_rows().size()), epoch,
                h.finished() ? "finished" : "not finished", h.view_size());
  }
}

void FuzzOne(const uint8_t* data, size_t size) {
  proto::ArrangementBackfillNode node;
  if (!node.ParseFromArray(data, static_cast<int>(size))) return;
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  absl::StatusOr<std::unique_ptr<ArrangementBackfillExecutor>> built =
      BuildArrangementBackfillFromPlan(
          node, *store,
          std::make_unique<testing::ScriptedExecutor>(ExecutorInfo{}));
  if (!built.ok()) {
    if (FuzzVerbose())
      std::printf("rejected: %s\n", built.status().ToString().c_str());
    FuzzCheck(built.status().code() == absl::StatusCode::kInvalidArgument,
              "a bad plan is InvalidArgument", built.status());
    return;
  }
  built->reset();
  Drive(node,
        FuzzSeed(absl::string_view(reinterpret_cast<const char*>(data), size)));
}

}  // namespace
}  // namespace backfill

// Invalid UTF-8 in string fields fails the parse (as it should) and logs an
// error line per input: silenced.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(data, size);
  return 0;
}
