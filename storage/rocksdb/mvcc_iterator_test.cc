// MvccIterator over an in-memory rocksdb::Iterator (a sorted vector that
// honours the read options' bounds): no database.
#include "storage/rocksdb/mvcc_iterator.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/rocksdb/mvcc_format.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

using Entries = std::vector<std::pair<std::string, std::string>>;

// Entries in MvccComparator order, clipped to the read options' bounds.
class VectorIterator final : public rocksdb::Iterator {
 public:
  VectorIterator(Entries entries, const rocksdb::ReadOptions& options,
                 rocksdb::Status final_status)
      : final_status_(std::move(final_status)) {
    const rocksdb::Comparator* cmp = MvccComparator();
    std::sort(entries.begin(), entries.end(),
              [cmp](const auto& a, const auto& b) {
                return cmp->Compare(a.first, b.first) < 0;
              });
    for (auto& entry : entries) {
      if (options.iterate_lower_bound != nullptr &&
          cmp->Compare(entry.first, *options.iterate_lower_bound) < 0) {
        continue;
      }
      if (options.iterate_upper_bound != nullptr &&
          cmp->Compare(entry.first, *options.iterate_upper_bound) >= 0) {
        continue;
      }
      entries_.push_back(std::move(entry));
    }
    position_ = entries_.size();
  }
  bool Valid() const override { return position_ < entries_.size(); }
  void SeekToFirst() override { position_ = 0; }
  void SeekToLast() override { position_ = entries_.size() - 1; }
  void Seek(const rocksdb::Slice& target) override {
    position_ = 0;
    while (position_ < entries_.size() &&
           MvccComparator()->Compare(entries_[position_].first, target) < 0) {
      ++position_;
    }
  }
  void SeekForPrev(const rocksdb::Slice&) override { position_ = 0; }
  void Next() override { ++position_; }
  void Prev() override { --position_; }
  rocksdb::Slice key() const override { return entries_[position_].first; }
  rocksdb::Slice value() const override { return entries_[position_].second; }
  rocksdb::Status status() const override {
    return Valid() ? rocksdb::Status::OK() : final_status_;
  }

 private:
  Entries entries_;
  size_t position_;
  rocksdb::Status final_status_;
};

constexpr TableId kTable = 7;
constexpr VirtualNode kVnode = 3;

std::string Key(const std::string& pk, uint64_t epoch,
                VirtualNode vnode = kVnode, TableId table = kTable) {
  return EncodeFullKey(FullKey{TableKey{table, vnode, pk}, Epoch(epoch)});
}
std::string Row(const std::string& row) {
  std::string value;
  AppendRowValue(row, &value);
  return value;
}
std::string Tombstone() {
  std::string value;
  AppendTombstoneValue(&value);
  return value;
}

struct Scan {
  PkRange range = PkRange::All();
  uint64_t read_epoch = 100;
  rocksdb::Status final_status = rocksdb::Status::OK();
};

std::unique_ptr<MvccIterator> NewIterator(
    const Entries& entries, const Scan& scan,
    rocksdb::ReadOptions* seen = nullptr) {
  return std::make_unique<MvccIterator>(
      MvccScan{.table_id = kTable,
               .vnode = kVnode,
               .range = scan.range,
               .read_epoch = Epoch(scan.read_epoch)},
      [&](const rocksdb::ReadOptions& options) -> rocksdb::Iterator* {
        if (seen != nullptr) *seen = options;
        return new VectorIterator(entries, options, scan.final_status);
      },
      nullptr);
}

std::vector<std::pair<std::string, std::string>> ReadAll(MvccIterator& it) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (it.SeekToFirst(); it.Valid(); it.Next()) {
    rows.emplace_back(std::string(it.key()), std::string(it.value()));
  }
  return rows;
}

TEST(MvccIteratorTest, NewIteratorIsNotPositioned) {
  auto it = NewIterator({{Key("a", 1), Row("x")}}, {});
  EXPECT_FALSE(it->Valid());
  EXPECT_THAT(it->status(), IsOk());
}

TEST(MvccIteratorTest, NewestVisibleVersionPerPk) {
  const Entries entries = {
      {Key("a", 1), Row("a1")}, {Key("a", 5), Row("a5")},
      {Key("a", 9), Row("a9")}, {Key("b", 2), Row("b2")},
      {Key("c", 8), Row("c8")},
  };
  auto at5 = NewIterator(entries, {.read_epoch = 5});
  EXPECT_THAT(ReadAll(*at5), ElementsAre(Pair("a", "a5"), Pair("b", "b2")));
  auto at100 = NewIterator(entries, {.read_epoch = 100});
  EXPECT_THAT(ReadAll(*at100),
              ElementsAre(Pair("a", "a9"), Pair("b", "b2"), Pair("c", "c8")));
  EXPECT_THAT(at100->status(), IsOk());
}

TEST(MvccIteratorTest, TombstoneHidesOlderVersionsOnly) {
  const Entries entries = {
      {Key("a", 1), Row("a1")}, {Key("a", 3), Tombstone()},
      {Key("a", 6), Row("a6")}, {Key("b", 1), Tombstone()},
      {Key("c", 1), Row("c1")},
  };
  EXPECT_THAT(ReadAll(*NewIterator(entries, {.read_epoch = 2})),
              ElementsAre(Pair("a", "a1"), Pair("c", "c1")));
  EXPECT_THAT(ReadAll(*NewIterator(entries, {.read_epoch = 4})),
              ElementsAre(Pair("c", "c1")));
  EXPECT_THAT(ReadAll(*NewIterator(entries, {.read_epoch = 9})),
              ElementsAre(Pair("a", "a6"), Pair("c", "c1")));
}

TEST(MvccIteratorTest, PkPrefixesAreDistinctRows) {
  // "a" and "a\0" are different rows however their epochs compare.
  const Entries entries = {{Key("a", 1), Row("1")},
                           {Key(std::string("a\0", 2), 9), Row("2")}};
  EXPECT_THAT(ReadAll(*NewIterator(entries, {})),
              ElementsAre(Pair("a", "1"), Pair(std::string("a\0", 2), "2")));
}

TEST(MvccIteratorTest, StaysInsideTheRangeAndVnode) {
  const Entries entries = {
      {Key("a", 1), Row("a")},
      {Key("b", 1), Row("b")},
      {Key("c", 1), Row("c")},
      {Key("a", 1, kVnode + 1), Row("next vnode")},
      {Key("a", 1, kVnode - 1), Row("previous vnode")},
      {Key("a", 1, kVnode, kTable + 1), Row("next table")},
  };
  EXPECT_THAT(ReadAll(*NewIterator(entries, {.range = PkRange::From("b")})),
              ElementsAre(Pair("b", "b"), Pair("c", "c")));
  EXPECT_THAT(
      ReadAll(*NewIterator(entries, {.range = PkRange::Between("a", "c")})),
      ElementsAre(Pair("a", "a"), Pair("b", "b")));
  EXPECT_THAT(
      ReadAll(*NewIterator(entries, {.range = PkRange::Between("c", "a")})),
      ElementsAre());
}

TEST(MvccIteratorTest, BoundsAreFirstVersionsOfTheRangeEnds) {
  // The bounds point into the iterator: inspected while it lives.
  rocksdb::ReadOptions seen;
  auto between = NewIterator({}, {.range = PkRange::Between("a", "m")}, &seen);
  EXPECT_EQ(seen.iterate_lower_bound->ToString(),
            Key("a", Epoch::Max().value()));
  EXPECT_EQ(seen.iterate_upper_bound->ToString(),
            Key("m", Epoch::Max().value()));
  EXPECT_TRUE(seen.total_order_seek);
  // To the vnode's end: no RocksDB bound (it costs a comparison per key);
  // the scan ends at the first key past the vnode.
  auto all = NewIterator({}, {.range = PkRange::All()}, &seen);
  EXPECT_EQ(seen.iterate_upper_bound, nullptr);
}

TEST(MvccIteratorTest, AnUnboundedScanEndsAtTheFirstKeyPastTheVnode) {
  // The RocksDB iterator runs on into the next vnode and table; whatever it
  // finds there (a row, a tombstone, older versions, even a key too short
  // to be a version) ends the scan without an error.
  // 13 bytes: shorter than any version, sorting after this table.
  const std::string short_key =
      Key("", 1, 0, kTable + 1).substr(0, 6) + "1234567";
  const Entries tails[] = {
      {{Key("a", 1, kVnode + 1), Row("next vnode")}},
      {{Key("a", 2, kVnode + 1), Tombstone()},
       {Key("a", 1, kVnode + 1), Row("older")}},
      {{short_key, Row("short")}},
      {{Key("a", 1, 0, kTable + 1), Row("next table")}},
  };
  for (const Entries& tail : tails) {
    Entries entries = {{Key("a", 1), Row("a")},
                       {Key("b", 3), Tombstone()},
                       {Key("b", 1), Row("b")}};
    entries.insert(entries.end(), tail.begin(), tail.end());
    for (uint64_t read_epoch : {2, 9}) {
      auto it = NewIterator(entries, {.read_epoch = read_epoch});
      const auto rows = ReadAll(*it);
      if (read_epoch == 2) {
        EXPECT_THAT(rows, ElementsAre(Pair("a", "a"), Pair("b", "b")));
      } else {
        EXPECT_THAT(rows, ElementsAre(Pair("a", "a")));  // b's tombstone last
      }
      EXPECT_THAT(it->status(), IsOk()) << tail.front().second;
    }
  }
}

TEST(MvccIteratorTest, VisitRowsMovesPastEachRowItVisits) {
  const Entries entries = {{Key("a", 1), Row("a")},  {Key("b", 2), Row("b2")},
                           {Key("b", 1), Row("b1")}, {Key("c", 1), Tombstone()},
                           {Key("d", 1), Row("d")},  {Key("e", 1), Row("e")}};
  auto it = NewIterator(entries, {});
  it->SeekToFirst();
  std::vector<std::string> seen;
  auto record = [&](absl::string_view key, absl::string_view value) {
    seen.push_back(absl::StrCat(key, "=", value));
    return true;
  };
  EXPECT_EQ(it->VisitRows(2, record), 2u);
  EXPECT_THAT(seen, ElementsAre("a=a", "b=b2"));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "d");
  // A refused row stops the batch on it.
  EXPECT_EQ(it->VisitRows(10,
                          [&](absl::string_view key, absl::string_view value) {
                            return key != "e" && record(key, value);
                          }),
            1u);
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "e");
  EXPECT_EQ(it->VisitRows(10, record), 1u);
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(it->VisitRows(10, record), 0u);
  EXPECT_THAT(seen, ElementsAre("a=a", "b=b2", "d=d", "e=e"));
  EXPECT_THAT(it->status(), IsOk());
}

TEST(MvccIteratorTest, SeekClampsToTheRangeAndSkipsToNewerPks) {
  const Entries entries = {{Key("a", 1), Row("a")},
                           {Key("c", 1), Row("c")},
                           {Key("e", 1), Row("e")}};
  auto it = NewIterator(entries, {.range = PkRange::From("b")});
  it->Seek("");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "c");
  it->Seek("d");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "e");
  it->Seek("f");
  EXPECT_FALSE(it->Valid());
  EXPECT_THAT(it->status(), IsOk());
}

TEST(MvccIteratorTest, CorruptValueIsDataLossNamingTheRow) {
  const Entries entries = {{Key("a", 1), Row("a")}, {Key("b", 2), "\x07junk"}};
  auto it = NewIterator(entries, {});
  ReadAll(*it);
  EXPECT_THAT(it->status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("corrupt state store value (unknown tag 7) of "
                                 "table 7 vnode 3 pk b @ epoch 2")));
  EXPECT_FALSE(it->Valid());
  it->SeekToFirst();  // Sticky.
  EXPECT_FALSE(it->Valid());
}

TEST(MvccIteratorTest, EpochZeroIsACorruptKey) {
  auto it = NewIterator({{Key("a", 0), Row("a")}}, {});
  it->SeekToFirst();
  EXPECT_THAT(it->status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("corrupt state store key (epoch 0 is never "
                                 "written) while reading table 7 vnode 3")));
}

TEST(MvccIteratorTest, RocksDbErrorsBecomeStatus) {
  auto it = NewIterator({{Key("a", 1), Row("a")}},
                        {.final_status = rocksdb::Status::Corruption("block")});
  EXPECT_THAT(ReadAll(*it), ElementsAre(Pair("a", "a")));
  EXPECT_THAT(it->status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("scan of table 7 vnode 3 at epoch 100")));
}

}  // namespace
}  // namespace rocksdb_internal
}  // namespace backfill
