// Writes the checked-in seed corpora of the executor fuzzers:
//   bazel run //executor/backfill:fuzz_corpus_generator --
//   $PWD/executor/backfill/testdata
// creates <dir>/backfill_state_fuzz/ (progress rows as a StateTable stores
// them: valid InProgress/Completed rows of several table shapes, and
// near-misses) and <dir>/arrangement_backfill_plan_fuzz/ (valid plan nodes of
// random table shapes, and each of the inconsistencies the builder rejects).
// Deterministic; run by hand, the output is committed.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/backfill/arrangement_backfill_executor.h"
#include "executor/backfill/backfill_state.h"
#include "executor/backfill/backfill_state_fuzz_input.h"
#include "executor/backfill/plan.pb.h"
#include "executor/testing/random_table.h"
#include "serde/vnode_bitmap.h"
#include "storage/catalog.pb.h"
#include "storage/memory_state_store.h"
#include "storage/state_table.h"
#include "storage/table_catalog.h"
#include "third_party/fuzzing/corpus_file.h"

namespace backfill {
namespace {

// ---- backfill_state_fuzz
// -----------------------------------------------------

struct StoredRow {
  std::string key;
  std::string value;
};

// The key and value bytes a progress StateTable stores for `row` (a full
// progress-table row: vnode, pos..., finished, row_count).
StoredRow Store(const TableCatalog& progress_catalog, const Row& row) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  auto table =
      StateTable::Create(progress_catalog, *store,
                         VnodeBitmap::All(progress_catalog.vnode_count))
          .value();
  absl::Status status = table->InitEpoch(EpochPair{Epoch(1), Epoch(0)});
  if (status.ok()) status = table->Insert(row);
  if (status.ok()) status = table->Commit(EpochPair{Epoch(2), Epoch(1)});
  if (status.ok()) status = store->Checkpoint(Epoch(1));
  if (!status.ok()) {
    std::fprintf(stderr, "cannot store %s: %s\n", RowDebugString(row).c_str(),
                 status.ToString().c_str());
    std::exit(1);
  }
  const VirtualNode vnode = static_cast<VirtualNode>(std::get<int16_t>(row[0]));
  StoredRow out;
  out.key = table->pk_serde().Serialize(Row{row[0]});
  auto local = store->NewLocalStateStore(progress_catalog.table_id, {}).value();
  status = local->Init(EpochPair{Epoch(2), Epoch(1)});
  auto value = local->Get(vnode, out.key);
  if (!status.ok() || !value.ok() || !value->has_value()) {
    std::fprintf(stderr, "cannot read back %s\n", RowDebugString(row).c_str());
    std::exit(1);
  }
  out.value = **value;
  return out;
}

struct Shape {
  uint8_t shape;
  std::vector<uint8_t> type_orders;
};

void WriteProgressCorpus(const std::filesystem::path& dir) {
  // (shape byte, type/order bytes): INT64 asc; VARCHAR desc + INT32 nulls
  // first (nullable, singleton); FLOAT64 + DECIMAL + TIMESTAMP column-aware;
  // BOOLEAN + BYTEA + DATE; TIME.
  const std::vector<Shape> shapes = {
      {0, {3}},
      {1 + 3 + 6, {2 * 12 + 7, 1 * 12 + 2}},
      {2 + 12, {5, 6, 3 * 12 + 11}},
      {2 + 6, {0, 8, 9}},
      {0 + 12, {10}},
  };
  std::mt19937_64 rng(20240611);
  int n = 0;
  auto write = [&](const std::string& name, const Shape& shape,
                   VirtualNode vnode, const std::string& key,
                   const std::string& value) {
    WriteCorpusFile(dir, absl::StrCat(name, "_", n++),
                    FormatProgressFuzzInput(shape.shape, shape.type_orders,
                                            vnode, key, value));
  };
  for (const Shape& shape : shapes) {
    const ProgressFuzzInput in = *ParseProgressFuzzInput(
        FormatProgressFuzzInput(shape.shape, shape.type_orders, 0, "", ""));
    const TableCatalog progress =
        BackfillProgressCatalog(in.upstream, kProgressFuzzProgressTableId);
    const std::vector<DataType> pk_types = in.upstream.PkTypes();
    const VirtualNode vnode =
        static_cast<VirtualNode>(rng() % kProgressFuzzVnodeCount);
    Row pos = testing::RandomTableRow(in.upstream, rng, 20);
    pos.resize(pk_types.size());
    // InProgress, Completed after rows, Completed empty (all NULL).
    const std::vector<VnodeProgress> progresses = {
        InProgress{pos, 1 + rng() % 1000}, Completed{pos, rng() % 1000},
        Completed{Row(pk_types.size(), Datum()), 0}};
    int near_miss = 0;
    for (const VnodeProgress& p : progresses) {
      Row row{static_cast<int16_t>(vnode)};
      for (const Datum& d : EncodeProgressValue(p)) row.push_back(d);
      const StoredRow stored = Store(progress, row);
      write("valid", shape, vnode, stored.key, stored.value);
      // Two near-misses each, in turn: truncated, a flipped byte, a
      // trailing byte, a key of the wrong length.
      for (int k = 0; k < 2; ++k) {
        switch (near_miss++ % 4) {
          case 0:
            write("truncated", shape, vnode, stored.key,
                  stored.value.substr(0, rng() % stored.value.size()));
            break;
          case 1: {
            std::string flipped = stored.value;
            flipped[rng() % flipped.size()] ^=
                static_cast<char>(1 + rng() % 255);
            write("flipped", shape, vnode, stored.key, flipped);
            break;
          }
          case 2:
            write("trailing", shape, vnode, stored.key, stored.value + "\x01");
            break;
          default:
            write("bad_key", shape, vnode, stored.key.substr(1), stored.value);
            break;
        }
      }
    }
    // A valid row whose count is at the top of the range (the count then
    // grows as the restarted actor sends more rows).
    Row huge{int16_t{1}};
    for (const Datum& d : EncodeProgressValue(InProgress{
             pos,
             static_cast<uint64_t>(std::numeric_limits<int64_t>::max())})) {
      huge.push_back(d);
    }
    StoredRow stored = Store(progress, huge);
    write("valid_max_count", shape, 1, stored.key, stored.value);
    // Rows the decoder must reject, though the value codec accepts them:
    // a negative count, NULL finished/count, a value of a wider pk.
    Row negative = huge;
    negative.back() = int64_t{-1};
    stored = Store(progress, negative);
    write("negative_count", shape, 1, stored.key, stored.value);
    TableCatalog nullable_progress = progress;
    for (ColumnDesc& column : nullable_progress.columns) column.nullable = true;
    Row null_finished = huge;
    null_finished[null_finished.size() - 2] = Datum();
    stored = Store(nullable_progress, null_finished);
    write("null_finished", shape, 1, stored.key, stored.value);
    Row null_count = huge;
    null_count.back() = Datum();
    stored = Store(nullable_progress, null_count);
    write("null_count", shape, 1, stored.key, stored.value);
  }
  // A value of a 1-column pk read under a 3-column pk shape (and back).
  {
    const Shape one = shapes[0];
    const Shape three = shapes[2];
    const ProgressFuzzInput in = *ParseProgressFuzzInput(
        FormatProgressFuzzInput(one.shape, one.type_orders, 0, "", ""));
    const TableCatalog progress =
        BackfillProgressCatalog(in.upstream, kProgressFuzzProgressTableId);
    Row row{int16_t{2}, int64_t{42}, false, int64_t{7}};
    const StoredRow stored = Store(progress, row);
    write("wrong_shape", three, 2, stored.key, stored.value);
  }
  // Counts at the top of the range with a position below the rows the
  // fuzzer inserts (the smallest of many such rows), in every vnode: the
  // restarted actor then reads snapshot rows after it and the count grows.
  std::mt19937_64 low_rng(20240613);
  for (const Shape& shape : shapes) {
    const ProgressFuzzInput in = *ParseProgressFuzzInput(
        FormatProgressFuzzInput(shape.shape, shape.type_orders, 0, "", ""));
    const TableCatalog progress =
        BackfillProgressCatalog(in.upstream, kProgressFuzzProgressTableId);
    const size_t pk_len = in.upstream.pk_indices.size();
    std::optional<Row> low;
    for (int i = 0; i < 64; ++i) {
      Row pk = testing::RandomTableRow(in.upstream, low_rng, 6);
      pk.resize(pk_len);
      if (!low.has_value() ||
          CompareRows(pk, *low, in.upstream.pk_orders) < 0) {
        low = std::move(pk);
      }
    }
    for (int v = 0; v < kProgressFuzzVnodeCount; ++v) {
      Row row{static_cast<int16_t>(v)};
      for (const Datum& d : EncodeProgressValue(InProgress{
               *low,
               static_cast<uint64_t>(std::numeric_limits<int64_t>::max())})) {
        row.push_back(d);
      }
      const StoredRow stored = Store(progress, row);
      write("valid_max_count_low_pos", shape, static_cast<VirtualNode>(v),
            stored.key, stored.value);
    }
  }
}

// ---- arrangement_backfill_plan_fuzz
// -------------------------------------------

proto::ArrangementBackfillNode RandomNode(std::mt19937_64& rng) {
  testing::RandomShapeOptions shape_options;
  shape_options.vnode_counts = {1, 4, 16};
  shape_options.allow_pruning = rng() % 2 == 0;
  const testing::RandomShape shape =
      testing::MakeRandomShape(rng, /*table_id=*/7, shape_options);
  proto::ArrangementBackfillNode node;
  *node.mutable_upstream_table() = TableCatalogToProto(shape.catalog);
  *node.mutable_progress_table() =
      TableCatalogToProto(BackfillProgressCatalog(shape.catalog, 99));
  for (int32_t id : shape.s2_column_ids) node.add_upstream_column_ids(id);
  for (int index : shape.output_indices) {
    node.add_output_indices(static_cast<uint32_t>(index));
  }
  node.set_chunk_size(static_cast<uint32_t>(rng() % 5));
  switch (rng() % 4) {
    case 0:
      break;  // no limit
    case 1:
      node.set_rate_limit(0);
      break;  // paused
    default:
      node.set_rate_limit(static_cast<uint32_t>(1 + rng() % 100));
      break;
  }
  node.set_actor_id(static_cast<uint32_t>(rng() % 10));
  node.set_fragment_id(static_cast<uint32_t>(rng() % 10));
  const int vnodes = shape.catalog.vnode_count;
  if (rng() % 2 == 0 && vnodes > 1) {
    const int begin = static_cast<int>(rng() % vnodes);
    node.set_vnode_bitmap(
        VnodeBitmap::FromRange(
            vnodes, begin,
            begin + 1 + static_cast<int>(rng() % (vnodes - begin)))
            .Serialize());
  }
  return node;
}

void WritePlanCorpus(const std::filesystem::path& dir) {
  std::mt19937_64 rng(20240612);
  for (int i = 0; i < 12; ++i) {
    WriteCorpusFile(dir, absl::StrCat("valid_", i),
                    RandomNode(rng).SerializeAsString());
  }
  // Near-misses: one inconsistency each (the builder's InvalidArgument
  // cases), and a truncated node.
  std::vector<std::pair<std::string, proto::ArrangementBackfillNode>> bad;
  auto mutate = [&](const std::string& name, auto&& change) {
    proto::ArrangementBackfillNode node = RandomNode(rng);
    change(node);
    bad.emplace_back(name, std::move(node));
  };
  mutate("no_upstream", [](auto& n) { n.clear_upstream_table(); });
  mutate("no_progress", [](auto& n) { n.clear_progress_table(); });
  mutate("dist_not_pk", [](auto& n) {
    n.mutable_upstream_table()->add_distribution_key(1000);
  });
  mutate("pk_not_in_s2", [](auto& n) {
    n.clear_upstream_column_ids();
    n.add_upstream_column_ids(1000);
  });
  mutate("output_out_of_range", [](auto& n) { n.add_output_indices(1000); });
  mutate("bitmap_size",
         [](auto& n) { n.set_vnode_bitmap(VnodeBitmap::All(32).Serialize()); });
  mutate("bitmap_garbage", [](auto& n) { n.set_vnode_bitmap("\x07garbage"); });
  mutate("chunk_size", [](auto& n) { n.set_chunk_size(1u << 30); });
  mutate("same_table_id", [](auto& n) {
    n.mutable_progress_table()->set_table_id(n.upstream_table().table_id());
  });
  mutate("progress_shape", [](auto& n) {
    n.mutable_progress_table()->mutable_columns(1)->set_type(proto::VARCHAR);
  });
  mutate("progress_vnodes", [](auto& n) {
    n.mutable_progress_table()->set_vnode_count(
        n.upstream_table().vnode_count() + 1);
  });
  mutate("progress_value_indices", [](auto& n) {
    n.mutable_progress_table()->clear_value_indices();
    n.mutable_progress_table()->add_value_indices(0);
  });
  mutate("progress_not_nullable", [](auto& n) {
    n.mutable_progress_table()->mutable_columns(1)->set_nullable(false);
  });
  mutate("unknown_type", [](auto& n) {
    n.mutable_upstream_table()->mutable_columns(0)->set_type(
        static_cast<proto::DataType>(99));
  });
  for (const auto& [name, node] : bad) {
    WriteCorpusFile(dir, absl::StrCat("bad_", name), node.SerializeAsString());
  }
  const std::string good = RandomNode(rng).SerializeAsString();
  WriteCorpusFile(dir, "truncated", good.substr(0, good.size() / 2));
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <executor/backfill/testdata>\n", argv[0]);
    return 2;
  }
  const std::filesystem::path root = argv[1];
  WriteProgressCorpus(root / "backfill_state_fuzz");
  WritePlanCorpus(root / "arrangement_backfill_plan_fuzz");
  return 0;
}

}  // namespace
}  // namespace backfill

int main(int argc, char** argv) { return backfill::Main(argc, argv); }
