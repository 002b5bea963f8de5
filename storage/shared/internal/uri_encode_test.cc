#include "storage/shared/internal/uri_encode.h"

#include <string>

#include "gtest/gtest.h"

namespace backfill::shared_internal {
namespace {

TEST(UriEncodeTest, UnreservedStayOthersAreUpperCaseHex) {
  EXPECT_EQ(UriEncode("AZaz09-._~"), "AZaz09-._~");
  EXPECT_EQ(UriEncode("a/b c+d=e&f"), "a%2Fb%20c%2Bd%3De%26f");
  EXPECT_EQ(UriEncode("1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM="),
            "1ueGcxLPRx1Tr%2FXYExHnhbYLgveDs2J%2Fwm36Hy4vbOwM%3D");
  EXPECT_EQ(UriEncode(std::string("\x00\xff\xe9", 3)), "%00%FF%E9");
  EXPECT_EQ(UriEncode(""), "");
}

}  // namespace
}  // namespace backfill::shared_internal
