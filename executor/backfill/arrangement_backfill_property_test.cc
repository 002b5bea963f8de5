// Model-based property test of ArrangementBackfillExecutor: random tables,
// random upstream traces, random barrier/checkpoint cadence, rate limits,
// pauses and throttles; after EVERY barrier the executor emits, the view
// equals CONTRACT §5's invariant computed from a model of the upstream (checked
// by BackfillHarness). The seed is printed on failure with the command that
// reruns it (environment BACKFILL_FIRST_SEED / BACKFILL_SEEDS, and
// BACKFILL_TINY_BUFFER_SEEDS for the tiny-buffer variant).
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "executor/testing/backfill_harness.h"
#include "executor/testing/random_table.h"
#include "gtest/gtest.h"
#include "storage/memory_state_store.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "third_party/absl_extras/status_macros.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using testing::BackfillHarness;
using testing::HarnessOptions;

int EnvInt(const char* name, int fallback) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::atoi(value) : fallback;
}

bool Chance(std::mt19937_64& rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}
int Uniform(std::mt19937_64& rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

VnodeBitmap RandomOwnership(std::mt19937_64& rng, int vnode_count) {
  if (Chance(rng, 0.6)) return VnodeBitmap::All(vnode_count);
  VnodeBitmap owned(vnode_count);
  if (Chance(rng, 0.5)) {
    const int begin = Uniform(rng, 0, vnode_count - 1);
    const int end = Uniform(rng, begin + 1, vnode_count);
    return VnodeBitmap::FromRange(vnode_count, begin, end);
  }
  for (int v = 0; v < vnode_count; ++v) {
    if (Chance(rng, 0.5)) owned.Set(static_cast<VirtualNode>(v));
  }
  if (owned.Count() == 0) owned.Set(0);
  return owned;
}

RateLimit RandomRateLimit(std::mt19937_64& rng) {
  if (Chance(rng, 0.5)) return RateLimit::Disabled();
  if (Chance(rng, 0.1)) return RateLimit::Pause();
  static const uint32_t kRates[] = {1, 2, 30, 200, 1000, 100000};
  return RateLimit::Fixed(kRates[Uniform(rng, 0, 5)]);
}

// Random upstream changes for one epoch, with random chunking and snapshot
// opportunities in between.
absl::Status RandomEpochDml(BackfillHarness& h, std::mt19937_64& rng,
                            uint64_t key_space, bool pk_updates) {
  const TableCatalog& catalog = h.upstream_table().catalog();
  const int ops = Uniform(rng, 0, 25);
  for (int i = 0; i < ops; ++i) {
    const auto& rows = h.upstream_rows();
    const int kind = Uniform(rng, 0, 9);
    if (kind < 4 || rows.empty()) {
      Row row = testing::RandomTableRow(catalog, rng, key_space);
      const std::string pk = h.upstream_table().pk_serde().Serialize(
          ProjectRow(row, catalog.pk_indices));
      if (!rows.contains(pk)) BACKFILL_RETURN_IF_ERROR(h.Insert(row));
    } else {
      auto it = rows.begin();
      std::advance(it, Uniform(rng, 0, static_cast<int>(rows.size()) - 1));
      const Row existing = it->second;
      if (kind < 7) {
        BACKFILL_RETURN_IF_ERROR(h.Delete(existing));
      } else if (kind < 9 || !pk_updates) {
        BACKFILL_RETURN_IF_ERROR(h.Update(
            existing, testing::RandomValueChange(catalog, existing, rng)));
      } else {
        // A pk-changing update (possibly to another vnode).
        Row moved = testing::RandomTableRow(catalog, rng, key_space);
        const std::string pk = h.upstream_table().pk_serde().Serialize(
            ProjectRow(moved, catalog.pk_indices));
        if (!rows.contains(pk))
          BACKFILL_RETURN_IF_ERROR(h.Update(existing, moved));
      }
    }
    if (Chance(rng, 0.2)) h.FlushChunk();
    if (Chance(rng, 0.2)) h.PushPending(Uniform(rng, 1, 3));
  }
  h.PushPending(Uniform(rng, 0, 4));
  return absl::OkStatus();
}

std::optional<Mutation> RandomMutation(std::mt19937_64& rng,
                                       FragmentId fragment) {
  switch (Uniform(rng, 0, 30)) {
    case 0:
      return PauseMutation{};
    case 1:
    case 2:
      return ResumeMutation{};
    case 3: {
      ThrottleMutation throttle;
      const RateLimit limit = RandomRateLimit(rng);
      throttle.rate_limits[fragment] = limit.ToOptionalU32();
      return throttle;
    }
    case 4: {
      ThrottleMutation throttle;  // another fragment: must be ignored
      throttle.rate_limits[fragment + 1] = 0;
      return throttle;
    }
    case 5:
      return StartFragmentBackfillMutation{{fragment}};
    default:
      return std::nullopt;
  }
}

// What a seed's run saw, summed over its actors (one per restart).
struct SeedStats {
  uint64_t buffer_freezes = 0;
};

// `budget`: ArrangementBackfillOptions::upstream_buffer_budget_bytes (the
// default if absent); drawn from nothing else, so a seed's trace is the
// same with and without it.
absl::Status RunSeed(uint64_t seed, StateStore& store,
                     std::optional<size_t> budget = std::nullopt,
                     SeedStats* stats = nullptr,
                     const testing::RandomShapeOptions& shape_options = {}) {
  std::mt19937_64 rng(seed);
  testing::RandomShape shape = testing::MakeRandomShape(rng, 7, shape_options);
  HarnessOptions options;
  options.upstream = shape.catalog;
  options.s2_column_ids = shape.s2_column_ids;
  options.backfill.output_indices = shape.output_indices;
  options.backfill.actor_id = 1;
  options.backfill.fragment_id = 10;
  static const uint32_t kChunkSizes[] = {1, 2, 3, 7, 16, 64, 256, 300};
  options.backfill.chunk_size = kChunkSizes[Uniform(rng, 0, 7)];
  options.backfill.rate_limit = RandomRateLimit(rng);
  options.owned = RandomOwnership(rng, shape.catalog.vnode_count);
  options.barrier_interval = absl::Milliseconds(Uniform(rng, 10, 1000));
  if (budget.has_value())
    options.backfill.upstream_buffer_budget_bytes = *budget;
  SeedStats local_stats;
  if (stats == nullptr) stats = &local_stats;
  SimulatedClock clock;
  BACKFILL_ASSIGN_OR_RETURN(auto h,
                            BackfillHarness::Create(store, clock, options));

  const int initial_rows = Chance(rng, 0.1) ? 0 : Uniform(rng, 1, 400);
  const uint64_t key_space = 4 * initial_rows + 20;
  const bool pk_updates = Chance(rng, 0.7);
  for (int i = 0; i < initial_rows; ++i) {
    Row row = testing::RandomTableRow(shape.catalog, rng, key_space);
    const std::string pk = h->upstream_table().pk_serde().Serialize(
        ProjectRow(row, shape.catalog.pk_indices));
    if (!h->upstream_rows().contains(pk))
      BACKFILL_RETURN_IF_ERROR(h->Insert(row));
  }
  std::optional<Mutation> first;
  const int start_kind = Uniform(rng, 0, 9);
  if (start_kind == 0) first = AddMutation{true, {}, {1}};
  if (start_kind == 1)
    first =
        AddMutation{false, {10}, {1}};  // paused until StartFragmentBackfill
  if (start_kind == 2) first = UpdateMutation{};
  BACKFILL_RETURN_IF_ERROR(h->StartBackfill(first));

  const int checkpoint_frequency = Uniform(rng, 1, 5);
  const int epochs = Uniform(rng, 5, 40);
  VnodeBitmap owned = *options.owned;
  for (int e = 0; e < epochs; ++e) {
    if (Chance(rng, 0.05)) {
      // Crash and recover, the actor taking over more vnodes (a rescale).
      stats->buffer_freezes += h->executor().num_buffer_freezes();
      h->Crash();
      owned = VnodeBitmap::Union(
          owned, RandomOwnership(rng, shape.catalog.vnode_count));
      BACKFILL_RETURN_IF_ERROR(h->Restart(owned));
    }
    BACKFILL_RETURN_IF_ERROR(RandomEpochDml(*h, rng, key_space, pk_updates));
    const BarrierKind kind = Uniform(rng, 1, checkpoint_frequency) == 1
                                 ? BarrierKind::kCheckpoint
                                 : BarrierKind::kBarrier;
    BACKFILL_RETURN_IF_ERROR(h->Barrier(kind, RandomMutation(rng, 10)));
  }
  // Drain: lift every pause and limit, keep changing the upstream, finish.
  BACKFILL_RETURN_IF_ERROR(
      h->Barrier(BarrierKind::kCheckpoint, ResumeMutation{}));
  BACKFILL_RETURN_IF_ERROR(h->Barrier(BarrierKind::kCheckpoint,
                                      StartFragmentBackfillMutation{{10}}));
  ThrottleMutation unlimited;
  unlimited.rate_limits[10] = std::nullopt;
  BACKFILL_RETURN_IF_ERROR(h->Barrier(BarrierKind::kCheckpoint, unlimited));
  for (int e = 0; e < 5000 && !h->finished(); ++e) {
    if (Chance(rng, 0.5))
      BACKFILL_RETURN_IF_ERROR(RandomEpochDml(*h, rng, key_space, pk_updates));
    h->PushPending(Uniform(rng, 0, 20));
    BACKFILL_RETURN_IF_ERROR(h->Barrier(
        Chance(rng, 0.5) ? BarrierKind::kCheckpoint : BarrierKind::kBarrier));
  }
  if (!h->finished()) {
    return absl::DeadlineExceededError(
        "the backfill did not finish in 5000 epochs");
  }
  // Steady state: the view stays equal to the table.
  for (int e = 0; e < 5; ++e) {
    BACKFILL_RETURN_IF_ERROR(RandomEpochDml(*h, rng, key_space, pk_updates));
    BACKFILL_RETURN_IF_ERROR(h->Barrier(BarrierKind::kCheckpoint));
  }
  if (!h->tracker().IsDone()) {
    return absl::InternalError("the progress tracker is not done after finish");
  }
  stats->buffer_freezes += h->executor().num_buffer_freezes();
  return absl::OkStatus();
}

TEST(ArrangementBackfillPropertyTest, InvariantHoldsAfterEveryBarrierInMemory) {
  const int first = EnvInt("BACKFILL_FIRST_SEED", 1);
  const int seeds = EnvInt("BACKFILL_SEEDS", 300);
  for (int seed = first; seed < first + seeds; ++seed) {
    auto store = NewMemoryStateStore();
    const absl::Status status = RunSeed(seed, *store);
    ASSERT_TRUE(status.ok()) << "seed " << seed << " (rerun with "
                             << "--test_env=BACKFILL_FIRST_SEED=" << seed
                             << " --test_env=BACKFILL_SEEDS=1): " << status;
  }
}

// CONTRACT §10: the same traces with a tiny upstream buffer budget (drawn
// per seed from 0 bytes to a few chunks), so most epochs freeze their
// position part-way and forward changes at once.
TEST(ArrangementBackfillPropertyTest, InvariantHoldsWithATinyUpstreamBuffer) {
  const int first = EnvInt("BACKFILL_FIRST_SEED", 1);
  const int seeds = EnvInt("BACKFILL_TINY_BUFFER_SEEDS", 100);
  static const size_t kBudgets[] = {0, 1, 100, 300, 1000, 4000};
  SeedStats stats;
  for (int seed = first; seed < first + seeds; ++seed) {
    auto store = NewMemoryStateStore();
    const size_t budget = kBudgets[static_cast<size_t>(seed) % 6];
    const absl::Status status = RunSeed(seed, *store, budget, &stats);
    ASSERT_TRUE(status.ok())
        << "seed " << seed << ", budget " << budget << " bytes (rerun with "
        << "--test_env=BACKFILL_FIRST_SEED=" << seed
        << " --test_env=BACKFILL_TINY_BUFFER_SEEDS=1): " << status;
  }
  if (seeds >= 50) {
    EXPECT_GT(stats.buffer_freezes, static_cast<uint64_t>(seeds))
        << "the budget should freeze many epochs";
  }
}

// Seeds BACKFILL_FIRST_SEED.. (`seeds` of them) over a memory store, shapes
// drawn with `shape_options`; the first failure fails the test with the
// flags that rerun it (`seeds_env` names the seed count's variable).
void RunSeedsInMemory(int seeds, const char* seeds_env,
                      const testing::RandomShapeOptions& shape_options) {
  const int first = EnvInt("BACKFILL_FIRST_SEED", 1);
  for (int seed = first; seed < first + seeds; ++seed) {
    auto store = NewMemoryStateStore();
    const absl::Status status =
        RunSeed(seed, *store, std::nullopt, nullptr, shape_options);
    ASSERT_TRUE(status.ok())
        << "seed " << seed << " (rerun with "
        << "--test_env=BACKFILL_FIRST_SEED=" << seed
        << " --test_env=" << seeds_env << "=1): " << status;
  }
}

// Issue 15 point 5: tables with up to 32,768 vnodes (few rows each, most
// vnodes empty), where the snapshot side scans a bounded number of vnodes
// per step and completes each vnode when its scan ends.
TEST(ArrangementBackfillPropertyTest, InvariantHoldsWithManyVnodes) {
  testing::RandomShapeOptions shape_options;
  shape_options.vnode_counts = {1024, 32768};
  RunSeedsInMemory(EnvInt("BACKFILL_MANY_VNODES_SEEDS", 12),
                   "BACKFILL_MANY_VNODES_SEEDS", shape_options);
}

// Whether `shape`'s output has a JSONB, MAP, LIST or STRUCT column.
bool OutputsANestedOrJsonbColumn(const testing::RandomShape& shape) {
  const std::vector<ColumnDesc>& columns = shape.catalog.columns;
  return std::any_of(
      shape.output_indices.begin(), shape.output_indices.end(), [&](int s2) {
        return std::any_of(
            columns.begin(), columns.end(), [&](const ColumnDesc& column) {
              return column.column_id == shape.s2_column_ids[s2] &&
                     (column.type.is_nested() ||
                      column.type.id() == DataType::kJsonb);
            });
      });
}

// Value columns of every type a table stores, not only the key types:
// JSONB, MAP, LIST and STRUCT (nested two deep) and the newer scalars, in
// both value encodings, projected and reordered into the output like any
// column.
TEST(ArrangementBackfillPropertyTest, InvariantHoldsWithEveryValueType) {
  const int seeds = EnvInt("BACKFILL_VALUE_TYPE_SEEDS", 40);
  testing::RandomShapeOptions shape_options;
  shape_options.value_type_probability = 0.6;
  // The shapes RunSeed draws first from each seed: enough of them must
  // output such a column for the test to mean something.
  int nested_outputs = 0;
  const int first = EnvInt("BACKFILL_FIRST_SEED", 1);
  for (int seed = first; seed < first + seeds; ++seed) {
    std::mt19937_64 rng(seed);
    if (OutputsANestedOrJsonbColumn(
            testing::MakeRandomShape(rng, 7, shape_options))) {
      ++nested_outputs;
    }
  }
  if (seeds >= 20) {
    EXPECT_GE(nested_outputs, seeds / 4)
        << "too few shapes put a JSONB, MAP, LIST or STRUCT column in the "
           "output";
  }
  RunSeedsInMemory(seeds, "BACKFILL_VALUE_TYPE_SEEDS", shape_options);
}

TEST(ArrangementBackfillPropertyTest,
     InvariantHoldsAfterEveryBarrierOnRocksDb) {
  const int first = EnvInt("BACKFILL_FIRST_SEED", 1) + 100000;
  const int seeds = EnvInt("BACKFILL_ROCKSDB_SEEDS", 25);
  const char* tmp = std::getenv("TEST_TMPDIR");
  for (int seed = first; seed < first + seeds; ++seed) {
    RocksDbStateStoreOptions options;
    options.path =
        absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/property_", seed);
    std::filesystem::remove_all(options.path);
    auto store = RocksDbStateStore::Open(options);
    ASSERT_TRUE(store.ok()) << store.status();
    const absl::Status status = RunSeed(seed, **store);
    ASSERT_TRUE(status.ok()) << "seed " << seed << ": " << status;
  }
}

}  // namespace
}  // namespace backfill
