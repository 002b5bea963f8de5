#include "third_party/absl_extras/cache_line_allocator.h"

#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace backfill {
namespace {

uintptr_t Address(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(CacheLineAllocatorTest, BlocksAreWholeLines) {
  EXPECT_EQ(CacheLineAllocator<char>::BlockBytes(1), 64u);
  EXPECT_EQ(CacheLineAllocator<char>::BlockBytes(64), 64u);
  EXPECT_EQ(CacheLineAllocator<char>::BlockBytes(65), 128u);
  // Six 24-byte vector headers: 144 bytes, three lines.
  EXPECT_EQ(CacheLineAllocator<std::vector<int>>::BlockBytes(6), 192u);
}

// The case it exists for: small blocks made one after the other. A packing
// allocator puts 144-byte blocks 144 bytes apart, so neighbours share a
// line; these never do.
TEST(CacheLineAllocatorTest, NeighbouringBlocksShareNoLine) {
  using Headers =
      std::vector<std::vector<int>, CacheLineAllocator<std::vector<int>>>;
  std::vector<std::unique_ptr<Headers>> blocks;
  for (int i = 0; i < 64; ++i) {
    blocks.push_back(std::make_unique<Headers>(6));
  }
  std::vector<std::pair<uintptr_t, uintptr_t>> lines;  // [first, last]
  for (const auto& block : blocks) {
    const uintptr_t begin = Address(block->data());
    ASSERT_EQ(begin % kCacheLineBytes, 0u);
    const uintptr_t end = Address(block->data() + block->size()) - 1;
    lines.emplace_back(begin / kCacheLineBytes, end / kCacheLineBytes);
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    for (size_t j = i + 1; j < lines.size(); ++j) {
      EXPECT_TRUE(lines[i].second < lines[j].first ||
                  lines[j].second < lines[i].first)
          << "blocks " << i << " and " << j << " share a line";
    }
  }
}

TEST(CacheLineAllocatorTest, WorksAsAVectorsAllocator) {
  std::vector<std::string, CacheLineAllocator<std::string>> strings;
  for (int i = 0; i < 1000; ++i) {
    strings.push_back(std::string(static_cast<size_t>(i % 40), 'x'));
    ASSERT_EQ(Address(strings.data()) % kCacheLineBytes, 0u);
  }
  for (int i = 0; i < 1000; ++i) {
    EXPECT_EQ(strings[static_cast<size_t>(i)].size(),
              static_cast<size_t>(i % 40));
  }
  auto copy = strings;
  EXPECT_EQ(copy, strings);
  EXPECT_TRUE(CacheLineAllocator<int>() == CacheLineAllocator<char>());
}

TEST(CacheLineAllocatorTest, ACountWhoseBlockOverflowsThrows) {
  CacheLineAllocator<uint64_t> allocator;
  const size_t too_many = std::numeric_limits<size_t>::max() / 8;
  EXPECT_THROW(allocator.allocate(too_many), std::bad_array_new_length);
}

struct alignas(128) Wide {
  char bytes[128];
};

TEST(CacheLineAllocatorTest, KeepsAWiderAlignment) {
  CacheLineAllocator<Wide> allocator;
  Wide* p = allocator.allocate(3);
  EXPECT_EQ(Address(p) % 128, 0u);
  allocator.deallocate(p, 3);
}

}  // namespace
}  // namespace backfill
