// CacheLineAllocator: an allocator whose blocks start on a cache line and
// fill whole lines, so that no other heap object shares a line with them.
//
//   // The headers of a chunk builder's column vectors, written with every
//   // value appended:
//   std::vector<std::vector<Datum>,
//               CacheLineAllocator<std::vector<Datum>>> columns;
//
// For small arrays that one thread writes at a high rate while other threads
// write objects allocated next to them. A general-purpose allocator packs
// small blocks of one size class side by side: two actors' 144-byte arrays
// made one after the other (by the thread that builds a job) share a 64-byte
// line, and each write then moves that line between the cores ("false
// sharing"): in the snapshot backfill with two actors, the decode into the
// columns took three times the CPU of one actor's for the same rows.
//
// Costs up to 63 bytes per block; use it for the few hot arrays, not for
// everything. Stateless: every instance equals every other.
#ifndef THIRD_PARTY_ABSL_EXTRAS_CACHE_LINE_ALLOCATOR_H_
#define THIRD_PARTY_ABSL_EXTRAS_CACHE_LINE_ALLOCATOR_H_

#include <cstddef>
#include <limits>
#include <new>

namespace backfill {

// The line size that the blocks align to: 64 bytes on x86-64 and most
// ARM64 cores (std::hardware_destructive_interference_size is not stable
// across compiler versions, which g++ warns about when it is used in a
// header).
inline constexpr size_t kCacheLineBytes = 64;

template <typename T>
class CacheLineAllocator {
 public:
  using value_type = T;

  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}  // NOLINT

  T* allocate(size_t n) {
    // Exactly the n whose BlockBytes(n) fits a size_t.
    if (n > (std::numeric_limits<size_t>::max() - (kCacheLineBytes - 1)) /
                sizeof(T)) {
      throw std::bad_array_new_length();
    }
    return static_cast<T*>(
        ::operator new (BlockBytes(n), std::align_val_t{kAlignment}));
  }
  // Unsized: clang does not declare sized deallocation unless asked to.
  void deallocate(T* p, size_t /*n*/) noexcept {
    ::operator delete (p, std::align_val_t{kAlignment});
  }

  // The bytes a block of n elements takes: n * sizeof(T) rounded up to
  // whole lines.
  static constexpr size_t BlockBytes(size_t n) {
    return (n * sizeof(T) + kCacheLineBytes - 1) / kCacheLineBytes *
           kCacheLineBytes;
  }

  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const noexcept {
    return true;
  }

 private:
  // A type aligned beyond a line keeps its own alignment.
  static constexpr size_t kAlignment = alignof(T) > kCacheLineBytes
                                           ? alignof(T)
                                           : kCacheLineBytes;
};

}  // namespace backfill

#endif  // THIRD_PARTY_ABSL_EXTRAS_CACHE_LINE_ALLOCATOR_H_
