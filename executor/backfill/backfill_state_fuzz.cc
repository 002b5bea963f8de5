// Fuzzes the decoding of persisted backfill progress rows and what a restart
// does with them. The input (executor/backfill/backfill_state_fuzz_input.h) is
// an upstream table shape plus the key and value bytes of one row of its
// progress table. Properties:
//  1. StateTable::DecodeRow of (key, value) then DecodeProgressValue either
//     fail with DataLoss or give a progress that re-encodes
//     (EncodeProgressValue) to exactly the decoded value columns.
//  2. Restart: with the value stored under its vnode (and upstream rows the
//     progress does not claim as sent), a new backfill actor
//     (BackfillHarness over a memory store) fails with DataLoss when loading
//     it iff decoding fails; otherwise it reads its snapshot from the stored
//     position and keeps CONTRACT §5's invariant (checked by the harness after
//     every barrier) while the upstream changes, and the progress it
//     persists loads again after a second crash.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <variant>

#include "absl/status/status.h"
#include "executor/backfill/arrangement_backfill_executor.h"
#include "executor/backfill/backfill_state.h"
#include "executor/backfill/backfill_state_fuzz_input.h"
#include "executor/testing/backfill_harness.h"
#include "executor/testing/random_table.h"
#include "serde/vnode_bitmap.h"
#include "storage/memory_state_store.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/clock.h"
#include "third_party/fuzzing/fuzz_check.h"

namespace backfill {
namespace {

// Decodes (key, value) as LoadProgress does (StateTable::DecodeRow, then
// DecodeProgressValue of the columns after the vnode) and checks property 1.
// Returns the progress, or nullopt after a DataLoss.
std::optional<VnodeProgress> Decode(const StateTable& table, VirtualNode vnode,
                                    absl::string_view key,
                                    absl::string_view value,
                                    absl::Span<const DataType> pk_types) {
  Row row;
  absl::Status status = table.DecodeRow(vnode, key, value, &row);
  if (!status.ok()) {
    FuzzCheck(status.code() == absl::StatusCode::kDataLoss,
              "a corrupt stored row is DataLoss", status);
    return std::nullopt;
  }
  FuzzCheck(row.size() == table.catalog().columns.size(),
            "a decoded row has every column");
  const RowView stored = RowView(row).subspan(1);
  absl::StatusOr<VnodeProgress> progress =
      DecodeProgressValue(vnode, stored, pk_types);
  if (!progress.ok()) {
    FuzzCheck(progress.status().code() == absl::StatusCode::kDataLoss,
              "a corrupt progress value is DataLoss", progress.status());
    return std::nullopt;
  }
  FuzzCheck(!std::holds_alternative<NotStarted>(*progress),
            "a stored progress is never NotStarted");
  FuzzCheck(RowsEqual(EncodeProgressValue(*progress), stored),
            "a decoded progress re-encodes to the stored columns");
  return *std::move(progress);
}

// Upstream DML for one epoch: a few random rows (and the row at the decoded
// position, which must count as sent), sent in chunks with snapshot-read
// opportunities in between.
void EpochDml(testing::BackfillHarness& h, std::mt19937_64& rng,
              const std::optional<Row>& pos_row) {
  const TableCatalog& catalog = h.upstream_table().catalog();
  auto insert = [&](const Row& row) {
    const std::string pk = h.upstream_table().pk_serde().Serialize(
        ProjectRow(row, catalog.pk_indices));
    // A NULL in a non-nullable column is InvalidArgument: just skipped.
    if (!h.upstream_rows().contains(pk)) h.Insert(row).IgnoreError();
  };
  if (pos_row.has_value()) insert(*pos_row);
  const int ops = static_cast<int>(rng() % 6);
  for (int i = 0; i < ops; ++i) {
    const auto& rows = h.upstream_rows();
    if (rng() % 4 != 0 || rows.empty()) {
      insert(testing::RandomTableRow(catalog, rng, /*key_space=*/6));
    } else {
      auto it = rows.begin();
      std::advance(it, static_cast<long>(rng() % rows.size()));
      const Row existing = it->second;
      FuzzCheck(h.Delete(existing).ok(), "deleting an upstream row");
    }
    if (rng() % 3 == 0) h.PushPending(1 + static_cast<int>(rng() % 3));
  }
  h.PushPending(1 + static_cast<int>(rng() % 4));
}

void FuzzOne(absl::string_view bytes) {
  std::optional<ProgressFuzzInput> in = ParseProgressFuzzInput(bytes);
  if (!in.has_value()) return;
  const std::vector<DataType> pk_types = in->upstream.PkTypes();
  const TableCatalog progress_catalog =
      BackfillProgressCatalog(in->upstream, kProgressFuzzProgressTableId);

  // 1. The fuzzed key and value, decoded.
  std::unique_ptr<StateStore> decode_store = NewMemoryStateStore();
  absl::StatusOr<std::unique_ptr<StateTable>> table =
      StateTable::Create(progress_catalog, *decode_store,
                         VnodeBitmap::All(kProgressFuzzVnodeCount));
  FuzzCheck(table.ok(), "the progress table is valid", table.status());
  Decode(**table, in->vnode, in->key, in->value, pk_types);
  // What a restart reads: the value under the canonical key of its vnode.
  const std::string key =
      (*table)->pk_serde().Serialize(Row{static_cast<int16_t>(in->vnode)});
  const std::optional<VnodeProgress> loaded =
      Decode(**table, in->vnode, key, in->value, pk_types);

  // 2. A restart from it.
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  SimulatedClock clock;
  std::mt19937_64 rng(FuzzSeed(bytes));
  testing::HarnessOptions options;
  options.upstream = in->upstream;
  for (size_t c = 0; c < in->upstream.columns.size(); ++c) {
    options.s2_column_ids.push_back(in->upstream.columns[c].column_id);
    options.backfill.output_indices.push_back(static_cast<int>(c));
  }
  options.backfill.chunk_size = 1 + static_cast<uint32_t>(rng() % 4);
  options.progress_table_id = kProgressFuzzProgressTableId;
  absl::StatusOr<std::unique_ptr<testing::BackfillHarness>> created =
      testing::BackfillHarness::Create(*store, clock, options);
  FuzzCheck(created.ok(), "the harness starts", created.status());
  testing::BackfillHarness& h = **created;
  // Upstream rows committed before the crash, except those the stored
  // progress says were already sent (the view, empty at the restart, would
  // miss them): the restarted actor reads the others from its snapshot.
  const TableCatalog& upstream = in->upstream;
  const int initial_rows = static_cast<int>(rng() % 12);
  for (int i = 0; i < initial_rows; ++i) {
    const Row row = testing::RandomTableRow(upstream, rng, /*key_space=*/6);
    const Row pk = ProjectRow(row, upstream.pk_indices);
    if (loaded.has_value() &&
        h.upstream_table().ComputeVnode(row) == in->vnode) {
      if (std::holds_alternative<Completed>(*loaded)) continue;
      if (CompareRows(pk, std::get<InProgress>(*loaded).current_pos,
                      upstream.pk_orders) <= 0) {
        continue;
      }
    }
    if (!h.upstream_rows().contains(
            h.upstream_table().pk_serde().Serialize(pk))) {
      h.Insert(row).IgnoreError();
    }
  }
  absl::Status status = h.Barrier();  // commits the upstream (checkpoint 1)
  FuzzCheck(status.ok(), "the initial rows commit", status);
  h.Crash();  // before the backfill ever ran: no progress stored
  {
    absl::StatusOr<std::unique_ptr<LocalStateStore>> local =
        store->NewLocalStateStore(kProgressFuzzProgressTableId, {});
    FuzzCheck(local.ok(), "a local store", local.status());
    FuzzCheck((*local)->Init(EpochPair{Epoch(2), Epoch(1)}).ok(), "Init");
    FuzzCheck((*local)
                  ->Insert(in->vnode, key,
                           absl::string_view(in->value.data(), in->value.size()))
                  .ok(),
              "Insert");
    FuzzCheck((*local)->Seal(EpochPair{Epoch(3), Epoch(2)}).ok(), "Seal");
    FuzzCheck(store->Checkpoint(Epoch(2)).ok(), "Checkpoint");
  }
  status = h.Restart(std::nullopt);
  FuzzCheck(status.ok(), "the restarted actor emits its first barrier", status);
  status = h.Barrier();  // the actor loads its progress here
  if (!loaded.has_value()) {
    if (FuzzVerbose()) std::printf("rejected: %s\n", status.ToString().c_str());
    FuzzCheck(status.code() == absl::StatusCode::kDataLoss,
              "loading a corrupt progress row fails with DataLoss", status);
    return;
  }
  FuzzCheck(status.ok(), "loading a valid progress row", status);
  if (FuzzVerbose()) {
    std::printf("loaded %s\n", ProgressDebugString(*loaded).c_str());
  }
  // The row at the loaded position, if the position is a full pk.
  std::optional<Row> pos_row;
  const Row& pos = std::holds_alternative<InProgress>(*loaded)
                       ? std::get<InProgress>(*loaded).current_pos
                       : std::get<Completed>(*loaded).current_pos;
  pos_row = pos;
  pos_row->push_back(std::string("at_pos"));
  for (int epoch = 0; epoch < 8; ++epoch) {
    EpochDml(h, rng, epoch == 0 ? pos_row : std::nullopt);
    status = h.Barrier(rng() % 3 == 0 ? BarrierKind::kBarrier
                                      : BarrierKind::kCheckpoint);
    FuzzCheck(status.ok(), "the invariant holds after a barrier", status);
    if (epoch == 4) {
      // What this actor persisted must load again.
      h.Crash();
      status = h.Restart(std::nullopt);
      FuzzCheck(status.ok(), "a second restart", status);
      status = h.Barrier();
      FuzzCheck(status.ok(), "the persisted progress loads again", status);
    }
  }
  if (FuzzVerbose()) {
    const VnodeProgress* now =
        h.executor().backfill_state() == nullptr
            ? nullptr
            : h.executor().backfill_state()->Get(in->vnode);
    std::printf("  then %s, %zu upstream rows, %s\n",
                now == nullptr ? "?" : ProgressDebugString(*now).c_str(),
                h.upstream_rows().size(),
                h.finished() ? "finished" : "not finished");
  }
}

}  // namespace
}  // namespace backfill

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  backfill::FuzzOne(
      absl::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
