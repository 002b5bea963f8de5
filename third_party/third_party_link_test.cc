// Links every third-party target and calls into each library once, so a
// broken wrapper (missing -l flag, wrong package) fails here, by name.
#include <civetweb.h>
#include <curl/curl.h>
#include <dlfcn.h>
#include <openssl/evp.h>
#include <zlib.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "google/protobuf/stubs/common.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "rocksdb/db.h"

namespace {

TEST(ThirdPartyLinkTest, Abseil) { EXPECT_EQ(absl::StrCat("a", 1), "a1"); }

TEST(ThirdPartyLinkTest, Protobuf) {
  EXPECT_EQ(GOOGLE_PROTOBUF_VERSION / 1000000, 3);
  EXPECT_FALSE(google::protobuf::internal::VersionString(GOOGLE_PROTOBUF_VERSION).empty());
}

TEST(ThirdPartyLinkTest, Zlib) {
  const std::string data = "123456789";
  EXPECT_EQ(crc32(0, reinterpret_cast<const Bytef*>(data.data()), data.size()),
            0xCBF43926u);
}

TEST(ThirdPartyLinkTest, RocksDb) {
  const char* tmp = std::getenv("TEST_TMPDIR");
  const std::string path = absl::StrCat(tmp ? tmp : "/tmp", "/link_test_db");
  std::filesystem::remove_all(path);
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  ASSERT_TRUE(rocksdb::DB::Open(options, path, &raw).ok());
  std::unique_ptr<rocksdb::DB> db(raw);
  ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), "k", "v").ok());
  std::string value;
  ASSERT_TRUE(db->Get(rocksdb::ReadOptions(), "k", &value).ok());
  EXPECT_EQ(value, "v");
}

TEST(ThirdPartyLinkTest, Civetweb) {
  EXPECT_NE(std::string(mg_version()), "");
}

TEST(ThirdPartyLinkTest, Grpc) {
  EXPECT_EQ(grpc::Version().substr(0, 2), "1.");
  // A channel is lazy: creating one to a closed port does no I/O.
  auto channel = grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials());
  EXPECT_EQ(channel->GetState(/*try_to_connect=*/false), GRPC_CHANNEL_IDLE);
}

TEST(ThirdPartyLinkTest, Curl) {
  // S3ObjectStore needs CURLOPT_AWS_SIGV4, new in 7.75.
  const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
  ASSERT_NE(info, nullptr);
  EXPECT_GE(info->version_num, 0x074B00u) << info->version;
}

TEST(ThirdPartyLinkTest, Crypto) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  ASSERT_EQ(EVP_Digest("abc", 3, digest, &length, EVP_sha256(), nullptr), 1);
  ASSERT_EQ(length, 32u);
  EXPECT_EQ(digest[0], 0xba);  // SHA-256("abc") = ba7816bf...
  EXPECT_EQ(digest[31], 0xad);
}

TEST(ThirdPartyLinkTest, Benchmark) {
  // The const overload: gcc 12 can miscompile the "+r,m" asm of the mutable
  // DoNotOptimize(T&) in benchmark 1.7 under -O1 sanitizer builds.
  const int x = 7;
  benchmark::DoNotOptimize(x);
  benchmark::ClobberMemory();
  EXPECT_EQ(x, 7);
}

// tcmalloc is the malloc of every test binary except under sanitizers.
TEST(ThirdPartyLinkTest, TcmallocIsTheMalloc) {
#if defined(ADDRESS_SANITIZER) || defined(THREAD_SANITIZER) || \
    defined(UNDEFINED_SANITIZER) || \
    defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "sanitizers use their own allocator";
#else
  void* symbol = dlsym(RTLD_DEFAULT, "tc_malloc");
  EXPECT_NE(symbol, nullptr) << "tcmalloc is not linked";
#endif
}

}  // namespace
