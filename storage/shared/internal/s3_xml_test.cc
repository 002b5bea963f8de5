#include "storage/shared/internal/s3_xml.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill::shared_internal {
namespace {

using ::backfill::testing::IsOkAndHolds;
using ::backfill::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Responses recorded from Ceph RGW 16.2.15 (storage/shared/testdata).
std::string ReadTestdata(const std::string& name) {
  std::ifstream file("storage/shared/testdata/" + name);
  EXPECT_TRUE(file.good()) << name;
  std::stringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

TEST(ParseListObjectsV2Test, RecordedTruncatedFirstPage) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      ListObjectsPage page,
      ParseListObjectsV2(ReadTestdata("rgw_list_objects_v2_page1.xml")));
  EXPECT_THAT(page.objects,
              ElementsAre(ObjectInfo{"a/b", 5}, ObjectInfo{"a/c", 3}));
  EXPECT_TRUE(page.is_truncated);
  EXPECT_EQ(page.next_continuation_token, "a/c");
}

TEST(ParseListObjectsV2Test, RecordedLastPageIgnoresTheRequestsToken) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      ListObjectsPage page,
      ParseListObjectsV2(ReadTestdata("rgw_list_objects_v2_page2.xml")));
  EXPECT_THAT(page.objects,
              ElementsAre(ObjectInfo{"a/d.x", 5}, ObjectInfo{"a/e~1", 5}));
  EXPECT_FALSE(page.is_truncated);
  // <ContinuationToken> echoes the request; only <NextContinuationToken>
  // counts.
  EXPECT_EQ(page.next_continuation_token, "");
}

TEST(ParseListObjectsV2Test, RecordedEmptyListing) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      ListObjectsPage page,
      ParseListObjectsV2(ReadTestdata("rgw_list_objects_v2_empty.xml")));
  EXPECT_THAT(page.objects, IsEmpty());
  EXPECT_FALSE(page.is_truncated);
}

TEST(ParseListObjectsV2Test, AwsStyleWithEntitiesAndTruncation) {
  // AWS's layout: the top-level fields first, the token after <Contents>.
  const std::string xml =
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<ListBucketResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\n"
      "  <Name>bucket</Name><Prefix>p/</Prefix><KeyCount>2</KeyCount>\n"
      "  <MaxKeys>2</MaxKeys><IsTruncated>true</IsTruncated>\n"
      "  <Contents><Key>p/a&amp;b&#x7e;</Key><Size>0</Size></Contents>\n"
      "  <Contents>\n    <Key>p/&lt;c&gt;</Key>\n    "
      "<Size>18446744073709551615</Size>\n"
      "  </Contents>\n"
      "  "
      "<NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</"
      "NextContinuationToken>\n"
      "</ListBucketResult>\n";
  BACKFILL_ASSERT_OK_AND_ASSIGN(ListObjectsPage page, ParseListObjectsV2(xml));
  EXPECT_THAT(page.objects,
              ElementsAre(ObjectInfo{"p/a&b~", 0},
                          ObjectInfo{"p/<c>", 18446744073709551615u}));
  EXPECT_TRUE(page.is_truncated);
  EXPECT_EQ(page.next_continuation_token,
            "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
}

TEST(ParseListObjectsV2Test, MalformedResponsesAreDataLoss) {
  auto data_loss = [](const char* what) {
    return StatusIs(absl::StatusCode::kDataLoss, HasSubstr(what));
  };
  EXPECT_THAT(ParseListObjectsV2(""), data_loss("no <ListBucketResult>"));
  EXPECT_THAT(ParseListObjectsV2("<html>502 Bad Gateway</html>"),
              data_loss("no <ListBucketResult>"));
  EXPECT_THAT(ParseListObjectsV2("<ListBucketResult><IsTruncated>false"),
              data_loss("unterminated <ListBucketResult>"));
  EXPECT_THAT(ParseListObjectsV2(
                  "<ListBucketResult><IsTruncated>false</IsTruncated>"
                  "<Contents><Size>1</Size></Contents></ListBucketResult>"),
              data_loss("without <Key>"));
  EXPECT_THAT(
      ParseListObjectsV2("<ListBucketResult><IsTruncated>false</IsTruncated>"
                         "<Contents><Key>k</Key><Size>-1</Size></Contents>"
                         "</ListBucketResult>"),
      data_loss("numeric <Size>"));
  EXPECT_THAT(
      ParseListObjectsV2("<ListBucketResult><IsTruncated>false</IsTruncated>"
                         "<Contents><Key>k</Key><Size>1</Size>"
                         "</ListBucketResult>"),
      data_loss("unterminated <Contents>"));
  EXPECT_THAT(ParseListObjectsV2(
                  "<ListBucketResult><IsTruncated>false</IsTruncated>"
                  "<Contents><Key>a&bogus;</Key><Size>1</Size></Contents>"
                  "</ListBucketResult>"),
              data_loss("unknown XML entity"));
  EXPECT_THAT(ParseListObjectsV2("<ListBucketResult></ListBucketResult>"),
              data_loss("<IsTruncated>"));
  EXPECT_THAT(ParseListObjectsV2("<ListBucketResult><IsTruncated>true</"
                                 "IsTruncated></ListBucketResult>"),
              data_loss("without <NextContinuationToken>"));
}

TEST(ParseListObjectsV2Test, SimilarElementNamesAreNotConfused) {
  // <KeyCount> must not be read as <Key>, nor <IsTruncatedX> as <IsTruncated>.
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      ListObjectsPage page,
      ParseListObjectsV2("<ListBucketResult><IsTruncatedX>true</IsTruncatedX>"
                         "<IsTruncated>false</IsTruncated><Contents><KeyCount>"
                         "1</KeyCount><Key>real</Key><Size>2</Size></Contents>"
                         "</ListBucketResult>"));
  EXPECT_THAT(page.objects, ElementsAre(ObjectInfo{"real", 2}));
  EXPECT_FALSE(page.is_truncated);
}

TEST(ParseS3ErrorTest, RecordedAndSynthetic) {
  S3Error error = ParseS3Error(ReadTestdata("rgw_error_no_such_key.xml"));
  EXPECT_EQ(error.code, "NoSuchKey");
  EXPECT_EQ(error.message, "");
  error = ParseS3Error(
      "<Error><Code>SlowDown</Code><Message>Please reduce your request rate "
      "&amp; "
      "retry.</Message></Error>");
  EXPECT_EQ(error.code, "SlowDown");
  EXPECT_EQ(error.message, "Please reduce your request rate & retry.");
  error = ParseS3Error("");
  EXPECT_EQ(error.code, "");
  error = ParseS3Error("<html><body>502 Bad Gateway</body></html>");
  EXPECT_EQ(error.code, "");
}

TEST(DecodeXmlTextTest, EntitiesAndReferences) {
  EXPECT_THAT(DecodeXmlText("a&amp;b&lt;&gt;&quot;&apos;"),
              IsOkAndHolds("a&b<>\"'"));
  EXPECT_THAT(DecodeXmlText("&#38;&#x41;&#xe9;&#x20AC;&#x1F600;"),
              IsOkAndHolds("&A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80"));
  EXPECT_THAT(DecodeXmlText("no entities"), IsOkAndHolds("no entities"));
  EXPECT_THAT(DecodeXmlText("&amp"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(DecodeXmlText("&#0;"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(DecodeXmlText("&#x110000;"),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace backfill::shared_internal
