#include "executor/runtime/verifier.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/runtime/demo/bulk_load.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "serde/vnode_bitmap.h"
#include "storage/committed_rows.h"
#include "storage/forwarding_state_store.h"
#include "storage/memory_state_store.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "storage/state_table.h"
#include "third_party/absl_extras/status_macros.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

TableCatalog Table() {
  TableCatalog catalog;
  catalog.table_id = 1;
  catalog.name = "t";
  catalog.columns = {{"id", DataType::kInt64, 1, false},
                     {"v", DataType::kVarchar, 2, true}};
  catalog.pk_indices = {0};
  catalog.pk_orders = {OrderType::Descending()};
  catalog.dist_key_indices = {0};
  catalog.vnode_count = 4;
  catalog.value_indices = {0, 1};
  return catalog;
}

StreamingJobOptions Job() {
  StreamingJobOptions options;
  options.upstream = Table();
  options.output_columns = {1};  // the view keeps id hidden
  options.initial_rows = 30;
  options.workload.seed = 9;
  return options;
}

// The upstream rows as view rows (v, id), in storage order.
std::vector<Row> ViewRowsOfUpstream(StateStore& store,
                                    const StreamingJobOptions& options) {
  std::vector<Row> rows;
  absl::StatusOr<std::unique_ptr<CommittedRowIterator>> it =
      NewStoreCommittedRowIterator(
          store, options.upstream,
          store.CommittedEpoch(options.upstream.table_id));
  EXPECT_THAT(it.status(), testing::IsOk());
  if (!it.ok()) return rows;
  for ((*it)->SeekToFirst(); (*it)->Valid(); (*it)->Next()) {
    rows.push_back(ProjectRow((*it)->row(), ViewColumns(options)));
  }
  EXPECT_THAT((*it)->status(), testing::IsOk());
  return rows;
}

// Writes `rows` (view columns: v, id) into the view and checkpoints.
void WriteView(StateStore& store, const StreamingJobOptions& options,
               const std::vector<Row>& rows) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto view, StateTable::Create(ViewCatalog(options), store,
                                    VnodeBitmap::All(Table().vnode_count)));
  const Epoch start = store.CommittedEpoch(options.view_table_id);
  EpochPair epoch{Epoch(start.value() + 1), start};
  BACKFILL_ASSERT_OK(view->InitEpoch(epoch));
  for (const Row& row : rows) BACKFILL_ASSERT_OK(view->Insert(row));
  const EpochPair next{Epoch(epoch.curr.value() + 1), epoch.curr};
  BACKFILL_ASSERT_OK(view->Commit(next));
  BACKFILL_ASSERT_OK(store.Checkpoint(next.prev));
}

TEST(VerifierTest, AnEqualViewIsConsistent) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  const StreamingJobOptions options = Job();
  BACKFILL_ASSERT_OK(LoadInitialRows(*store, options).status());
  WriteView(*store, options, ViewRowsOfUpstream(*store, options));
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                VerifyView(*store, options));
  EXPECT_TRUE(verdict.consistent) << verdict.mismatch;
  EXPECT_EQ(verdict.upstream_rows, 30u);
  EXPECT_EQ(verdict.view_rows, 30u);
  EXPECT_EQ(verdict.mismatch, "");
}

TEST(VerifierTest, AMissingRowIsNamedWithTheCounts) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  const StreamingJobOptions options = Job();
  BACKFILL_ASSERT_OK(LoadInitialRows(*store, options).status());
  std::vector<Row> rows = ViewRowsOfUpstream(*store, options);
  const Row missing = rows[7];
  rows.erase(rows.begin() + 7);
  WriteView(*store, options, rows);
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                VerifyView(*store, options));
  EXPECT_FALSE(verdict.consistent);
  EXPECT_EQ(verdict.mismatch,
            absl::StrCat("row 7: table ", RowDebugString(missing),
                         " is missing from the view (table has 30 rows, "
                         "view has 29)"));
}

TEST(VerifierTest, AnExtraViewRowIsNamed) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  const StreamingJobOptions options = Job();
  BACKFILL_ASSERT_OK(LoadInitialRows(*store, options).status());
  std::vector<Row> rows = ViewRowsOfUpstream(*store, options);
  rows.push_back({Datum(std::string("extra")), Datum(int64_t{1000})});
  WriteView(*store, options, rows);
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                VerifyView(*store, options));
  EXPECT_FALSE(verdict.consistent);
  EXPECT_THAT(verdict.mismatch, HasSubstr("extra"));
  EXPECT_THAT(verdict.mismatch, HasSubstr("is not in the table"));
  EXPECT_THAT(verdict.mismatch, EndsWith("(table has 30 rows, view has 31)"));
}

TEST(VerifierTest, ADifferentValueNamesTheFirstDifferingRow) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  const StreamingJobOptions options = Job();
  BACKFILL_ASSERT_OK(LoadInitialRows(*store, options).status());
  std::vector<Row> rows = ViewRowsOfUpstream(*store, options);
  rows[4][0] = Datum(std::string("changed"));
  rows[9][0] = Datum(std::string("later"));
  WriteView(*store, options, rows);
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                VerifyView(*store, options));
  EXPECT_FALSE(verdict.consistent);
  EXPECT_THAT(verdict.mismatch, StartsWith("row 4: table "));
  EXPECT_THAT(verdict.mismatch, HasSubstr("changed"));
  EXPECT_THAT(verdict.mismatch, ::testing::Not(HasSubstr("later")));
  EXPECT_EQ(verdict.upstream_rows, 30u);
  EXPECT_EQ(verdict.view_rows, 30u);
}

// ---- Constant memory: the merge holds one row per side --------------------

// Where each side of a merge is, and how far apart they ever were.
struct Lag {
  int64_t upstream = 0;
  int64_t view = 0;
  int64_t max = 0;
  void Moved() { max = std::max(max, std::abs(upstream - view)); }
};

// `num_rows` rows generated on the fly (never all in memory), in storage
// order: vnode 0, pk = the id big-endian; (id, "v<id>") for the upstream,
// ("v<id>", id) for the view.
class GeneratedRows final : public CommittedRowIterator {
 public:
  GeneratedRows(bool upstream, int64_t num_rows, Lag* lag)
      : upstream_(upstream), num_rows_(num_rows), lag_(lag) {}
  bool Valid() const override { return id_ < num_rows_; }
  void SeekToFirst() override {
    id_ = 0;
    Fill();
  }
  void Next() override {
    ++id_;
    (upstream_ ? lag_->upstream : lag_->view) = id_;
    lag_->Moved();
    Fill();
  }
  VirtualNode vnode() const override { return 0; }
  absl::string_view pk() const override { return pk_; }
  const Row& row() const override { return row_; }
  absl::Status status() const override { return absl::OkStatus(); }

 private:
  void Fill() {
    pk_.assign(8, '\0');
    for (int i = 0; i < 8; ++i) pk_[7 - i] = static_cast<char>(id_ >> (8 * i));
    Datum id(id_);
    Datum v(absl::StrCat("v", id_));
    row_ = upstream_ ? Row{id, v} : Row{v, id};
  }
  const bool upstream_;
  const int64_t num_rows_;
  Lag* const lag_;
  int64_t id_ = 0;
  std::string pk_;
  Row row_;
};

// Counts the rows a sink holds: none, it just counts, and checks that the
// upstream and view rows arrive interleaved.
class CountingSink final : public VerifiedRowSink {
 public:
  absl::Status AddUpstreamRow(RowView row) override {
    EXPECT_EQ(row.size(), 1u);
    ++upstream;
    lag.Moved();
    return absl::OkStatus();
  }
  absl::Status AddViewRow(RowView row) override {
    EXPECT_EQ(row.size(), 1u);
    ++view;
    lag.Moved();
    return absl::OkStatus();
  }
  int64_t& upstream = lag.upstream;
  int64_t& view = lag.view;
  Lag lag;
};

TEST(VerifierTest, AMergeOfManyRowsReadsBothTablesInLockstep) {
  constexpr int64_t kRows = 100000;
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  StreamingJobOptions options = Job();
  Lag readers;
  options.committed_rows =
      [&](const TableCatalog& catalog,
          Epoch) -> absl::StatusOr<std::unique_ptr<CommittedRowIterator>> {
    return std::make_unique<GeneratedRows>(
        catalog.table_id == options.upstream.table_id, kRows, &readers);
  };
  CountingSink sink;
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                VerifyView(*store, options, &sink));
  EXPECT_TRUE(verdict.consistent) << verdict.mismatch;
  EXPECT_EQ(verdict.upstream_rows, static_cast<uint64_t>(kRows));
  EXPECT_EQ(verdict.view_rows, static_cast<uint64_t>(kRows));
  EXPECT_EQ(sink.upstream, kRows);
  EXPECT_EQ(sink.view, kRows);
  // Neither reader ever ran ahead of the other by more than the row under
  // comparison, and the dump rows came out as they were compared: the
  // check buffers O(1) rows, not a table.
  EXPECT_LE(readers.max, 1);
  EXPECT_LE(sink.lag.max, 1);
}

TEST(VerifierTest, ReadersOutOfStorageOrderAreInternal) {
  std::unique_ptr<StateStore> store = NewMemoryStateStore();
  StreamingJobOptions options = Job();
  options.committed_rows =
      [&](const TableCatalog&,
          Epoch) -> absl::StatusOr<std::unique_ptr<CommittedRowIterator>> {
    // The same key twice.
    class Twice final : public CommittedRowIterator {
     public:
      bool Valid() const override { return left_ > 0; }
      void SeekToFirst() override { left_ = 2; }
      void Next() override { --left_; }
      VirtualNode vnode() const override { return 1; }
      absl::string_view pk() const override { return "k"; }
      const Row& row() const override { return row_; }
      absl::Status status() const override { return absl::OkStatus(); }

     private:
      int left_ = 0;
      Row row_{Datum(int64_t{1}), Datum(std::string("a"))};
    };
    return std::make_unique<Twice>();
  };
  EXPECT_THAT(VerifyView(*store, options).status(),
              testing::StatusIs(absl::StatusCode::kInternal,
                                HasSubstr("not in storage order")));
}

// ---- The verdict does not share the code it checks ------------------------

// Hides one key of one table from every iterator of the store it wraps:
// both the state tables' reads (local instances) and the store's committed
// reads. A sabotaged read path that a check through it could not notice.
class KeyHidingIterator final : public StateStoreIterator {
 public:
  KeyHidingIterator(std::unique_ptr<StateStoreIterator> inner, bool hide,
                    std::string pk)
      : inner_(std::move(inner)), hide_(hide), pk_(std::move(pk)) {}
  bool Valid() const override { return inner_->Valid(); }
  void SeekToFirst() override {
    inner_->SeekToFirst();
    Skip();
  }
  void Seek(absl::string_view pk) override {
    inner_->Seek(pk);
    Skip();
  }
  void Next() override {
    inner_->Next();
    Skip();
  }
  absl::string_view key() const override { return inner_->key(); }
  absl::string_view value() const override { return inner_->value(); }
  absl::Status status() const override { return inner_->status(); }

 private:
  void Skip() {
    while (hide_ && inner_->Valid() && inner_->key() == pk_) inner_->Next();
  }
  std::unique_ptr<StateStoreIterator> inner_;
  const bool hide_;
  const std::string pk_;
};

struct HiddenKey {
  TableId table_id;
  VirtualNode vnode;
  std::string pk;
  bool Matches(TableId table, VirtualNode v) const {
    return table == table_id && v == vnode;
  }
};

class KeyHidingLocal final : public LocalStateStore {
 public:
  KeyHidingLocal(std::unique_ptr<LocalStateStore> inner, HiddenKey hidden)
      : inner_(std::move(inner)), hidden_(std::move(hidden)) {}
  TableId table_id() const override { return inner_->table_id(); }
  bool replicated() const override { return inner_->replicated(); }
  absl::Status Init(EpochPair first) override { return inner_->Init(first); }
  absl::Status Insert(VirtualNode vnode, absl::string_view pk,
                      absl::string_view value) override {
    return inner_->Insert(vnode, pk, value);
  }
  absl::Status Delete(VirtualNode vnode, absl::string_view pk) override {
    return inner_->Delete(vnode, pk);
  }
  absl::StatusOr<std::optional<std::string>> Get(
      VirtualNode vnode, absl::string_view pk) override {
    return inner_->Get(vnode, pk);
  }
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      VirtualNode vnode, const PkRange& range,
      const ScanOptions& options) override {
    BACKFILL_ASSIGN_OR_RETURN(auto it,
                              inner_->NewIterator(vnode, range, options));
    return std::unique_ptr<StateStoreIterator>(new KeyHidingIterator(
        std::move(it), hidden_.Matches(table_id(), vnode), hidden_.pk));
  }
  absl::Status Seal(EpochPair next) override { return inner_->Seal(next); }
  Epoch epoch() const override { return inner_->epoch(); }

 private:
  std::unique_ptr<LocalStateStore> inner_;
  const HiddenKey hidden_;
};

class KeyHidingStore final : public ForwardingStateStore {
 public:
  KeyHidingStore(StateStore& inner, HiddenKey hidden)
      : ForwardingStateStore(&inner), hidden_(std::move(hidden)) {}
  absl::StatusOr<std::unique_ptr<LocalStateStore>> NewLocalStateStore(
      TableId table_id, const LocalOptions& options) override {
    BACKFILL_ASSIGN_OR_RETURN(auto local,
                              inner().NewLocalStateStore(table_id, options));
    return std::unique_ptr<LocalStateStore>(
        new KeyHidingLocal(std::move(local), hidden_));
  }
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      TableId table_id, VirtualNode vnode, const PkRange& range,
      Epoch read_epoch, const ScanOptions& options) override {
    BACKFILL_ASSIGN_OR_RETURN(
        auto it,
        inner().NewIterator(table_id, vnode, range, read_epoch, options));
    return std::unique_ptr<StateStoreIterator>(new KeyHidingIterator(
        std::move(it), hidden_.Matches(table_id, vnode), hidden_.pk));
  }

 private:
  const HiddenKey hidden_;
};

std::string NewTestDirectory() {
  static std::atomic<int> counter{0};
  const char* tmp = std::getenv("TEST_TMPDIR");
  return absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/verifier_", ::getpid(),
                      "_", counter.fetch_add(1));
}

TEST(VerifierTest, TheRawReaderSeesAKeyThatTheStoresIteratorsSkip) {
  RocksDbStateStoreOptions store_options;
  store_options.path = NewTestDirectory();
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::unique_ptr<RocksDbStateStore> rocksdb,
                                RocksDbStateStore::Open(store_options));
  StreamingJobOptions options = Job();
  BACKFILL_ASSERT_OK(LoadInitialRows(*rocksdb, options).status());
  // The view lacks the upstream's first row; the sabotaged store hides that
  // row of the upstream from every iterator, state tables' included.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<CommittedRowIterator> first,
      rocksdb->NewRawCommittedRowIterator(
          options.upstream,
          rocksdb->CommittedEpoch(options.upstream.table_id)));
  first->SeekToFirst();
  ASSERT_TRUE(first->Valid());
  const HiddenKey hidden{options.upstream.table_id, first->vnode(),
                         std::string(first->pk())};
  const Row missing = ProjectRow(first->row(), ViewColumns(options));
  first.reset();
  std::vector<Row> rows = ViewRowsOfUpstream(*rocksdb, options);
  ASSERT_EQ(rows.size(), 30u);
  ASSERT_TRUE(RowsEqual(rows.front(), missing));
  rows.erase(rows.begin());
  WriteView(*rocksdb, options, rows);
  KeyHidingStore sabotaged(*rocksdb, hidden);

  // Through the sabotaged store's own reads, table and view look equal: a
  // state table over it does not see the row either.
  ASSERT_EQ(ViewRowsOfUpstream(sabotaged, options).size(), 29u);
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      auto table,
      StateTable::Create(options.upstream, sabotaged,
                         VnodeBitmap::All(options.upstream.vnode_count)));
  const Epoch committed = sabotaged.CommittedEpoch(options.upstream.table_id);
  BACKFILL_ASSERT_OK(
      table->InitEpoch(EpochPair{Epoch(committed.value() + 1), committed}));
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto it, table->IterWithVnode(hidden.vnode));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    EXPECT_NE(it->pk_bytes(), hidden.pk);
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict fooled,
                                VerifyView(sabotaged, options));
  EXPECT_TRUE(fooled.consistent);

  // The raw reader does not go through them: the row is found missing.
  options.committed_rows = [&](const TableCatalog& catalog, Epoch epoch) {
    return rocksdb->NewRawCommittedRowIterator(catalog, epoch);
  };
  BACKFILL_ASSERT_OK_AND_ASSIGN(ViewVerdict verdict,
                                VerifyView(sabotaged, options));
  EXPECT_FALSE(verdict.consistent);
  EXPECT_EQ(verdict.mismatch,
            absl::StrCat("row 0: table ", RowDebugString(missing),
                         " is missing from the view (table has 30 rows, "
                         "view has 29)"));
}

}  // namespace
}  // namespace backfill
