#include "storage/rocksdb/mvcc_format.h"

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "storage/table_key.h"

namespace backfill {
namespace rocksdb_internal {
namespace {

int Compare(const std::string& a, const std::string& b) {
  const int r = MvccComparator()->Compare(a, b);
  return r < 0 ? -1 : (r > 0 ? 1 : 0);
}

std::string Key(TableId table, VirtualNode vnode, const std::string& pk,
                uint64_t epoch) {
  return EncodeFullKey(FullKey{TableKey{table, vnode, pk}, Epoch(epoch)});
}

TEST(MvccComparatorTest, NameIsPersisted) {
  EXPECT_STREQ(MvccComparator()->Name(), "backfill.MvccKeyComparator.v1");
}

TEST(MvccComparatorTest, NewestVersionFirst) {
  EXPECT_LT(Compare(Key(1, 2, "a", 9), Key(1, 2, "a", 3)), 0);
  EXPECT_EQ(Compare(Key(1, 2, "a", 3), Key(1, 2, "a", 3)), 0);
}

TEST(MvccComparatorTest, UserKeyBeforeEpoch) {
  // Bytewise order of whole keys would put "a"@1 after "a\0"@9.
  EXPECT_LT(Compare(Key(1, 2, "a", 1), Key(1, 2, std::string("a\0", 2), 9)), 0);
  EXPECT_LT(Compare(Key(1, 2, "", 1), Key(1, 2, "\xff", 9)), 0);
  EXPECT_LT(Compare(Key(1, 2, "\xff\xff", 1), Key(1, 3, "", 9)), 0);
  EXPECT_LT(Compare(Key(1, 0xffff, "z", 1), Key(2, 0, "", 9)), 0);
}

TEST(MvccComparatorTest, MatchesTheOrderOfDecodedKeys) {
  // Random full keys sorted by the comparator come out in (table, vnode, pk,
  // epoch descending) order.
  const uint32_t seed = 20261201;
  SCOPED_TRACE(seed);
  std::mt19937 random(seed);
  std::vector<FullKey> keys;
  for (int i = 0; i < 500; ++i) {
    std::string pk(random() % 4, '\0');
    for (char& c : pk) c = "\x00\x01\x7f\xff"[random() % 4];
    keys.push_back(FullKey{TableKey{static_cast<TableId>(random() % 3),
                                    static_cast<VirtualNode>(random() % 3), pk},
                           Epoch(1 + random() % 4)});
  }
  std::vector<std::string> encoded;
  for (const FullKey& key : keys) encoded.push_back(EncodeFullKey(key));
  std::sort(encoded.begin(), encoded.end(),
            [](const std::string& a, const std::string& b) {
              return Compare(a, b) < 0;
            });
  std::sort(keys.begin(), keys.end(), [](const FullKey& a, const FullKey& b) {
    return std::tie(a.table_key, b.epoch) < std::tie(b.table_key, a.epoch);
  });
  for (size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(encoded[i], EncodeFullKey(keys[i])) << keys[i].DebugString();
  }
}

TEST(MvccComparatorTest, TotalOverShortKeys) {
  // Corrupt keys shorter than the suffix are all user key.
  EXPECT_EQ(Compare("", ""), 0);
  EXPECT_LT(Compare("", "a"), 0);
  EXPECT_LT(Compare("abc", "abd"), 0);
  EXPECT_GT(Compare("abcdefg", Key(0, 0, "", 1)), 0);
}

TEST(UserKeyPrefixTest, IsTheKeyWithoutItsEpoch) {
  auto prefix = NewUserKeyPrefixExtractor();
  EXPECT_STREQ(prefix->Name(), "backfill.UserKeyPrefix.v1");
  const std::string a = Key(7, 3, "pk", 1);
  const std::string b = Key(7, 3, "pk", 99);
  EXPECT_TRUE(prefix->InDomain(a));
  EXPECT_EQ(prefix->Transform(a), prefix->Transform(b));
  EXPECT_NE(prefix->Transform(a), prefix->Transform(Key(7, 3, "pk2", 1)));
  EXPECT_EQ(prefix->Transform(a).size(), a.size() - kEpochSuffixSize);
  EXPECT_FALSE(prefix->InDomain(rocksdb::Slice("short")));
}

TEST(MvccValueTest, RoundTrips) {
  std::string value;
  AppendRowValue(std::string("r\0w", 3), &value);
  EXPECT_EQ(value, std::string("\x01r\0w", 4));
  absl::string_view row;
  EXPECT_EQ(ParseMvccValue(value, &row), MvccValueKind::kRow);
  EXPECT_EQ(row, absl::string_view("r\0w", 3));
  std::string tombstone;
  AppendTombstoneValue(&tombstone);
  EXPECT_EQ(tombstone, std::string("\0", 1));
  EXPECT_EQ(ParseMvccValue(tombstone, &row), MvccValueKind::kTombstone);
  std::string empty_row;
  AppendRowValue("", &empty_row);
  EXPECT_EQ(ParseMvccValue(empty_row, &row), MvccValueKind::kRow);
  EXPECT_TRUE(row.empty());
}

TEST(MvccValueTest, CorruptValues) {
  absl::string_view row;
  EXPECT_EQ(ParseMvccValue("", &row), MvccValueKind::kCorrupt);
  EXPECT_EQ(ParseMvccValue("\x07junk", &row), MvccValueKind::kCorrupt);
  EXPECT_EQ(ParseMvccValue(std::string("\0x", 2), &row),
            MvccValueKind::kCorrupt);
  EXPECT_EQ(DescribeCorruptValue(""), "empty");
  EXPECT_EQ(DescribeCorruptValue("\x07junk"), "unknown tag 7");
}

}  // namespace
}  // namespace rocksdb_internal
}  // namespace backfill
