#include "storage/shared/internal/sha256.h"

#include <openssl/evp.h>

#include <cassert>

#include "absl/strings/escaping.h"

namespace backfill::shared_internal {

std::string Sha256Hex(absl::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_length = 0;
  // EVP_Digest fails only on allocation failure or a missing algorithm,
  // neither of which a caller could handle.
  [[maybe_unused]] int ok = EVP_Digest(data.data(), data.size(), digest,
                                       &digest_length, EVP_sha256(), nullptr);
  assert(ok == 1 && digest_length == 32);
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(digest), digest_length));
}

}  // namespace backfill::shared_internal
