#include "serde/vnode_bitmap.h"

#include <random>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(VnodeBitmapTest, SetTestCountIterate) {
  VnodeBitmap bitmap(200);
  EXPECT_EQ(bitmap.size(), 200u);
  EXPECT_TRUE(bitmap.None());
  for (VirtualNode v : {199, 0, 63, 64, 65, 128}) bitmap.Set(v);
  EXPECT_EQ(bitmap.Count(), 6);
  EXPECT_TRUE(bitmap.Test(64));
  EXPECT_FALSE(bitmap.Test(1));
  EXPECT_FALSE(bitmap.Test(200));  // out of range
  EXPECT_FALSE(bitmap.Test(60000));
  EXPECT_THAT(bitmap.ToVector(), ElementsAre(0, 63, 64, 65, 128, 199));
  bitmap.Reset(64);
  EXPECT_THAT(bitmap.ToVector(), ElementsAre(0, 63, 65, 128, 199));
  EXPECT_EQ(bitmap.DebugString(), "{0,63,65,128,199}/200");
  EXPECT_EQ(VnodeBitmap().DebugString(), "{}/0");
  EXPECT_EQ(VnodeBitmap(3).DebugString(), "{}/3");
}

TEST(VnodeBitmapTest, Builders) {
  EXPECT_TRUE(VnodeBitmap::All(256).IsAll());
  EXPECT_EQ(VnodeBitmap::All(256).DebugString(), "{0-255}/256");
  EXPECT_EQ(VnodeBitmap::Singleton().DebugString(), "{0}/1");
  EXPECT_EQ(VnodeBitmap::FromRange(300, 60, 130).DebugString(), "{60-129}/300");
  EXPECT_THAT(VnodeBitmap::Create(0),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(VnodeBitmap::Create(kMaxVnodeCount + 1),
              StatusIs(absl::StatusCode::kInvalidArgument));
  BACKFILL_ASSERT_OK_AND_ASSIGN(VnodeBitmap max,
                                VnodeBitmap::Create(kMaxVnodeCount));
  EXPECT_EQ(max.size(), 32768u);
}

TEST(VnodeBitmapTest, EvenSplitIsContiguousAndCovering) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(auto parts, VnodeBitmap::EvenSplit(10, 3));
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].DebugString(), "{0-3}/10");
  EXPECT_EQ(parts[1].DebugString(), "{4-6}/10");
  EXPECT_EQ(parts[2].DebugString(), "{7-9}/10");
  for (int count : {1, 7, 256, 1000, kMaxVnodeCount}) {
    for (int actors : {1, 2, 3, 7, 64}) {
      if (actors > count) continue;
      SCOPED_TRACE(absl::StrCat(count, " / ", actors));
      BACKFILL_ASSERT_OK_AND_ASSIGN(auto split,
                                    VnodeBitmap::EvenSplit(count, actors));
      VnodeBitmap all(count);
      for (const VnodeBitmap& part : split) {
        EXPECT_TRUE(VnodeBitmap::Intersection(all, part).None());
        all = VnodeBitmap::Union(all, part);
        EXPECT_GE(part.Count(), count / actors);
        EXPECT_LE(part.Count(), count / actors + 1);
      }
      EXPECT_TRUE(all.IsAll());
    }
  }
  EXPECT_THAT(VnodeBitmap::EvenSplit(4, 5),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(VnodeBitmap::EvenSplit(4, 0),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(VnodeBitmapTest, SetAlgebraMatchesStdSet) {
  const uint64_t seed = 99;
  SCOPED_TRACE(absl::StrCat("seed=", seed));
  std::mt19937_64 rng(seed);
  for (int trial = 0; trial < 100; ++trial) {
    const int count = std::uniform_int_distribution<int>(1, 700)(rng);
    VnodeBitmap a(count), b(count);
    std::set<int> sa, sb;
    for (int i = 0; i < count / 2; ++i) {
      const int x = rng() % count, y = rng() % count;
      a.Set(x);
      sa.insert(x);
      b.Set(y);
      sb.insert(y);
    }
    auto to_set = [](const VnodeBitmap& bm) {
      std::set<int> s;
      for (VirtualNode v : bm.set_vnodes()) s.insert(v);
      return s;
    };
    std::set<int> u = sa, i, d;
    u.insert(sb.begin(), sb.end());
    for (int x : sa) (sb.count(x) ? i : d).insert(x);
    EXPECT_EQ(to_set(a), sa);
    EXPECT_EQ(to_set(VnodeBitmap::Union(a, b)), u);
    EXPECT_EQ(to_set(VnodeBitmap::Intersection(a, b)), i);
    EXPECT_EQ(to_set(VnodeBitmap::Difference(a, b)), d);
    EXPECT_EQ(a.Count(), static_cast<int>(sa.size()));
    EXPECT_EQ(VnodeBitmap::Union(a, b), VnodeBitmap::Union(b, a));
    EXPECT_NE(a, VnodeBitmap(count + 1));
    BACKFILL_ASSERT_OK_AND_ASSIGN(VnodeBitmap back,
                                  VnodeBitmap::Deserialize(a.Serialize()));
    EXPECT_EQ(back, a);
  }
}

TEST(VnodeBitmapTest, GoldenSerialisation) {
  VnodeBitmap bitmap(10);
  bitmap.Set(0);
  bitmap.Set(9);
  EXPECT_EQ(absl::BytesToHexString(bitmap.Serialize()),
            "010a000000"
            "0102");
  EXPECT_EQ(absl::BytesToHexString(VnodeBitmap::Singleton().Serialize()),
            "0101000000"
            "01");
}

TEST(VnodeBitmapTest, DeserializeRejectsCorruptBytes) {
  struct Case {
    const char* hex;
    const char* message;
  } cases[] = {
      {"", "truncated header"},
      {"0101", "truncated header"},
      {"020a0000000102", "unknown format byte 2"},
      {"0100000000", "vnode count 0"},
      {"0101800000", "vnode count 32769"},
      {"010a00000001", "length 6 does not match 7"},
      {"010a000000010200", "length 8 does not match 7"},
      {"010a0000000104", "padding bits"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(VnodeBitmap::Deserialize(absl::HexStringToBytes(c.hex)),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr(c.message)))
        << c.hex;
  }
}

}  // namespace
}  // namespace backfill
