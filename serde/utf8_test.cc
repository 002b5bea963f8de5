#include "serde/utf8.h"

#include <string>

#include "gtest/gtest.h"

namespace backfill {
namespace {

TEST(Utf8Test, SequenceLengths) {
  EXPECT_EQ(Utf8SequenceLength("a"), 1u);
  EXPECT_EQ(Utf8SequenceLength(std::string(1, '\0')), 1u);
  EXPECT_EQ(Utf8SequenceLength("\xc3\xa9x"), 2u);         // é
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82\xac"), 3u);      // €
  EXPECT_EQ(Utf8SequenceLength("\xf0\x9f\x98\x80"), 4u);  // U+1F600
  EXPECT_EQ(Utf8SequenceLength("\xf4\x8f\xbf\xbf"), 4u);  // U+10FFFF
  EXPECT_EQ(Utf8SequenceLength(""), 0u);
}

TEST(Utf8Test, RejectsMalformedSequences) {
  EXPECT_EQ(Utf8SequenceLength("\x80"), 0u);              // continuation
  EXPECT_EQ(Utf8SequenceLength("\xc0\x80"), 0u);          // overlong NUL
  EXPECT_EQ(Utf8SequenceLength("\xc1\xbf"), 0u);          // overlong
  EXPECT_EQ(Utf8SequenceLength("\xe0\x9f\xbf"), 0u);      // overlong 3-byte
  EXPECT_EQ(Utf8SequenceLength("\xf0\x8f\xbf\xbf"), 0u);  // overlong 4-byte
  EXPECT_EQ(Utf8SequenceLength("\xed\xa0\x80"), 0u);      // U+D800
  EXPECT_EQ(Utf8SequenceLength("\xed\xbf\xbf"), 0u);      // U+DFFF
  EXPECT_EQ(Utf8SequenceLength("\xf4\x90\x80\x80"), 0u);  // U+110000
  EXPECT_EQ(Utf8SequenceLength("\xf5\x80\x80\x80"), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xff"), 0u);
  EXPECT_EQ(Utf8SequenceLength("\xe2\x82"), 0u);      // truncated
  EXPECT_EQ(Utf8SequenceLength("\xe2\x28\xac"), 0u);  // bad continuation
}

TEST(Utf8Test, WholeStrings) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("order_id"));
  EXPECT_TRUE(IsValidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"));
  EXPECT_FALSE(IsValidUtf8("caf\xc3"));         // truncated at the end
  EXPECT_FALSE(IsValidUtf8("a\xffz"));          // a bad byte in the middle
  EXPECT_FALSE(IsValidUtf8("\xed\xa0\x80ok"));  // a surrogate first
}

// AppendUtf8 writes the shortest form at each length boundary, and every
// non-surrogate code point it writes is one valid sequence of that length.
TEST(Utf8Test, AppendUtf8EncodesEveryLength) {
  struct Case {
    uint32_t code_point;
    std::string bytes;
  };
  const Case cases[] = {
      {0x00, std::string(1, '\0')},
      {0x7F, "\x7f"},
      {0x80, "\xc2\x80"},
      {0x7FF, "\xdf\xbf"},
      {0x800, "\xe0\xa0\x80"},
      {0x20AC, "\xe2\x82\xac"},
      {0xFFFF, "\xef\xbf\xbf"},
      {0x10000, "\xf0\x90\x80\x80"},
      {0x10FFFF, "\xf4\x8f\xbf\xbf"},
  };
  for (const Case& c : cases) {
    std::string out = "x";
    AppendUtf8(c.code_point, &out);
    EXPECT_EQ(out, "x" + c.bytes) << c.code_point;
  }
  for (uint32_t code_point = 0; code_point <= 0x10FFFF; code_point += 7) {
    if (code_point >= 0xD800 && code_point <= 0xDFFF) continue;
    std::string out;
    AppendUtf8(code_point, &out);
    ASSERT_EQ(Utf8SequenceLength(out), out.size()) << code_point;
  }
}

}  // namespace
}  // namespace backfill
