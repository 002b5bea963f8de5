#include "third_party/fuzzing/corpus_file.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gtest/gtest.h"

namespace backfill {
namespace {

std::filesystem::path TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");
  return dir != nullptr ? std::filesystem::path(dir)
                        : std::filesystem::temp_directory_path();
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(CorpusFileTest, WritesTheBytesCreatingTheDirectory) {
  const std::filesystem::path dir = TempDir() / "corpus" / "nested";
  const std::string bytes("a\0b\xff", 4);
  WriteCorpusFile(dir, "seed", bytes);
  EXPECT_EQ(ReadFile(dir / "seed"), bytes);
  // Rewriting truncates.
  WriteCorpusFile(dir, "seed", "x");
  EXPECT_EQ(ReadFile(dir / "seed"), "x");
}

TEST(CorpusFileDeathTest, AnUnwritablePathExitsOneNamingIt) {
  const std::filesystem::path file = TempDir() / "not_a_directory";
  WriteCorpusFile(TempDir(), "not_a_directory", "");
  EXPECT_EXIT(WriteCorpusFile(file, "seed", "bytes"),
              ::testing::ExitedWithCode(1), "cannot write corpus file .*seed");
}

}  // namespace
}  // namespace backfill
