// The two S3 response bodies the object store reads: a ListObjectsV2 page
// and an error. A small scan for the few elements we need, not a general
// XML parser: S3 responses are flat, machine-written documents.
//
//   BACKFILL_ASSIGN_OR_RETURN(ListObjectsPage page, ParseListObjectsV2(body));
//   for (const ObjectInfo& object : page.objects) ...
//   if (page.is_truncated) request again with page.next_continuation_token
#ifndef STORAGE_SHARED_INTERNAL_S3_XML_H_
#define STORAGE_SHARED_INTERNAL_S3_XML_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/shared/object_store.h"

namespace backfill::shared_internal {

struct ListObjectsPage {
  // <Contents> in document order: <Key> (entities decoded) and <Size>.
  std::vector<ObjectInfo> objects;
  // <IsTruncated>true</IsTruncated>.
  bool is_truncated = false;
  // <NextContinuationToken>, decoded; "" if absent.
  std::string next_continuation_token;
};

// Parses a ListObjectsV2 response (<ListBucketResult>). DataLoss, quoting
// the offending part, if it is not one: no root element, a <Contents>
// without <Key> or with a <Size> that is not a number, an unterminated
// element, an unknown entity, a truncated page without a token.
absl::StatusOr<ListObjectsPage> ParseListObjectsV2(absl::string_view xml);

struct S3Error {
  std::string code;     // <Code>, e.g. "NoSuchKey", "SlowDown"; "" if none
  std::string message;  // <Message>; often "" (RGW)
};

// The <Error> of an S3 error body; empty fields for a body that has none
// (HEAD responses have no body; proxies send HTML). Never fails.
S3Error ParseS3Error(absl::string_view xml);

// Decodes the five predefined entities and numeric references (&#38;,
// &#x26;). InvalidArgument on an unknown or unterminated entity.
absl::StatusOr<std::string> DecodeXmlText(absl::string_view text);

}  // namespace backfill::shared_internal

#endif  // STORAGE_SHARED_INTERNAL_S3_XML_H_
