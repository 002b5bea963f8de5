#include "storage/table_key.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::HasSubstr;

TEST(TableKeyTest, LayoutIsPinned) {
  // Never change: persisted (FORMAT.md).
  const std::string encoded =
      EncodeFullKey(FullKey{TableKey{0x01020304, 0x0506, "pk"}, Epoch(1)});
  EXPECT_EQ(encoded, std::string("\x01\x02\x03\x04\x05\x06pk"
                                 "\xff\xff\xff\xff\xff\xff\xff\xfe",
                                 16));
}

TEST(TableKeyTest, RoundTrips) {
  for (const std::string& pk :
       {std::string(), std::string("\x00\xff", 2), std::string(100, 'x')}) {
    const FullKey key{TableKey{7, kMaxVnodeCount - 1, pk}, Epoch(123456789)};
    const std::string encoded = EncodeFullKey(key);
    auto decoded = DecodeFullKey(encoded);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ(decoded->ToFullKey(), key);
  }
}

TEST(TableKeyTest, NewerEpochsSortFirstInTheSuffix) {
  std::string newer, older;
  AppendEpochSuffix(Epoch(10), &newer);
  AppendEpochSuffix(Epoch(9), &older);
  EXPECT_LT(newer, older);
  std::string max;
  AppendEpochSuffix(Epoch::Max(), &max);
  EXPECT_EQ(max, std::string(8, '\0'));
}

TEST(TableKeyTest, CorruptKeysAreDataLoss) {
  EXPECT_THAT(DecodeFullKey("short"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("too short")));
  std::string bad_vnode = EncodeFullKey(FullKey{TableKey{1, 0, "x"}, Epoch(1)});
  bad_vnode[4] = '\xff';
  EXPECT_THAT(DecodeFullKey(bad_vnode),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("vnode 65280")));
}

TEST(TableKeyTest, SplitEncodedFullKeySeparatesTheEpochSuffix) {
  const std::string encoded =
      EncodeFullKey(FullKey{TableKey{7, 3, "pk"}, Epoch(5)});
  const EncodedFullKeyParts parts = SplitEncodedFullKey(encoded);
  std::string user_key;
  AppendTableKeyPrefix(7, 3, &user_key);
  user_key += "pk";
  EXPECT_EQ(parts.user_key, user_key);
  EXPECT_EQ(DecodeEpochSuffix(parts.epoch_suffix), Epoch(5));
  // Any bytes: short (corrupt) keys are all user key.
  EXPECT_EQ(SplitEncodedFullKey("short").user_key, "short");
  EXPECT_TRUE(SplitEncodedFullKey("short").epoch_suffix.empty());
  EXPECT_EQ(SplitEncodedFullKey("12345678").user_key, "");
  EXPECT_EQ(SplitEncodedFullKey("12345678").epoch_suffix, "12345678");
}

TEST(TableKeyTest, DebugStrings) {
  EXPECT_EQ((TableKey{7, 3, std::string("\x00\x01", 2)}.DebugString()),
            "table 7 vnode 3 pk \\x00\\x01");
  EXPECT_EQ((FullKey{TableKey{7, 3, "a"}, Epoch(42)}.DebugString()),
            "table 7 vnode 3 pk a @ epoch 42");
  EXPECT_EQ(PkRange::From("a").DebugString(), "[a, +inf)");
  EXPECT_EQ(PkRange::Between("a", "b").DebugString(), "[a, b)");
  EXPECT_EQ(EpochPair::ForInitial(Epoch(2)).DebugString(), "{curr 2, prev 1}");
  EXPECT_TRUE(PkRange::Between("b", "b").IsEmpty());
  EXPECT_TRUE(PkRange::Between("a", "b").Contains("a"));
  EXPECT_FALSE(PkRange::Between("a", "b").Contains("b"));
}

}  // namespace
}  // namespace backfill
