// VnodeBitmap: a set of vnodes out of a table's vnode count, e.g. the vnodes an
// actor owns. Set/test, count, ascending iteration, set algebra, a persisted
// serialisation (serde/FORMAT.md, never change) and the standard assignments
// (all vnodes, singleton, an even contiguous split among actors).
//
//   VnodeBitmap owned(256);            // none set
//   owned.Set(3);
//   for (VirtualNode v : owned.set_vnodes()) { ... }     // 3
//   std::vector<VnodeBitmap> parts = *VnodeBitmap::EvenSplit(256, 3);
//
// A value type; not thread-safe for concurrent mutation.
#ifndef SERDE_VNODE_BITMAP_H_
#define SERDE_VNODE_BITMAP_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "serde/vnode.h"

namespace backfill {

class VnodeBitmap {
 public:
  // The empty bitmap over 0 vnodes: a placeholder (e.g. a default member);
  // every real bitmap has 1..kMaxVnodeCount vnodes.
  VnodeBitmap() = default;

  // No vnode set. REQUIRES: 1 <= vnode_count <= kMaxVnodeCount (use Create
  // for untrusted counts).
  explicit VnodeBitmap(int vnode_count);

  // As the constructor. Errors: InvalidArgument for a bad count.
  static absl::StatusOr<VnodeBitmap> Create(int vnode_count);
  // Every vnode set. REQUIRES: as the constructor.
  static VnodeBitmap All(int vnode_count);
  // The bitmap of a singleton table: 1 vnode, vnode 0 set.
  static VnodeBitmap Singleton();
  // Vnodes [begin, end) set. REQUIRES: 0 <= begin <= end <= vnode_count and
  // the count valid.
  static VnodeBitmap FromRange(int vnode_count, int begin, int end);
  // Splits vnode_count vnodes among num_actors actors in contiguous ranges,
  // as RisingWave assigns them: each actor gets vnode_count / num_actors
  // vnodes, the first vnode_count % num_actors actors one more; actor 0 gets
  // the lowest vnodes. Errors: InvalidArgument unless the count is valid and
  // 1 <= num_actors <= vnode_count.
  static absl::StatusOr<std::vector<VnodeBitmap>> EvenSplit(int vnode_count,
                                                            int num_actors);

  // The vnode count (number of bits), not the number of set vnodes.
  size_t size() const { return static_cast<size_t>(vnode_count_); }
  int vnode_count() const { return vnode_count_; }

  // REQUIRES: vnode < size().
  void Set(VirtualNode vnode);
  void Reset(VirtualNode vnode);
  // False for vnode >= size().
  bool Test(VirtualNode vnode) const {
    return vnode < vnode_count_ &&
           ((words_[vnode / 64] >> (vnode % 64)) & 1) != 0;
  }
  // Number of set vnodes.
  int Count() const;
  bool None() const { return Count() == 0; }
  bool IsAll() const { return Count() == vnode_count_; }

  // Set algebra. REQUIRES: a.size() == b.size().
  static VnodeBitmap Union(const VnodeBitmap& a, const VnodeBitmap& b);
  static VnodeBitmap Intersection(const VnodeBitmap& a, const VnodeBitmap& b);
  static VnodeBitmap Difference(const VnodeBitmap& a, const VnodeBitmap& b);

  // Ascending iteration over the set vnodes: `for (VirtualNode v :
  // bitmap.set_vnodes())`. Invalidated by any mutation of the bitmap.
  class SetVnodeIterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = VirtualNode;
    using difference_type = std::ptrdiff_t;
    using pointer = const VirtualNode*;
    using reference = VirtualNode;

    VirtualNode operator*() const {
      return static_cast<VirtualNode>(position_);
    }
    SetVnodeIterator& operator++() {
      position_ = bitmap_->NextSetFrom(position_ + 1);
      return *this;
    }
    SetVnodeIterator operator++(int) {
      SetVnodeIterator copy = *this;
      ++*this;
      return copy;
    }
    friend bool operator==(const SetVnodeIterator& a,
                           const SetVnodeIterator& b) {
      return a.position_ == b.position_;
    }
    friend bool operator!=(const SetVnodeIterator& a,
                           const SetVnodeIterator& b) {
      return !(a == b);
    }

   private:
    friend class VnodeBitmap;
    SetVnodeIterator(const VnodeBitmap* bitmap, int position)
        : bitmap_(bitmap), position_(position) {}
    const VnodeBitmap* bitmap_ = nullptr;
    int position_ = 0;
  };
  struct SetVnodes {
    const VnodeBitmap* bitmap;
    SetVnodeIterator begin() const {
      return SetVnodeIterator(bitmap, bitmap->NextSetFrom(0));
    }
    SetVnodeIterator end() const {
      return SetVnodeIterator(bitmap, bitmap->vnode_count_);
    }
  };
  SetVnodes set_vnodes() const { return SetVnodes{this}; }
  std::vector<VirtualNode> ToVector() const;

  friend bool operator==(const VnodeBitmap& a, const VnodeBitmap& b) {
    return a.vnode_count_ == b.vnode_count_ && a.words_ == b.words_;
  }
  friend bool operator!=(const VnodeBitmap& a, const VnodeBitmap& b) {
    return !(a == b);
  }

  // Format byte 0x01, u32 LE vnode count, then ceil(count / 8) bytes with
  // vnode v in byte v / 8, bit v % 8 (LSB first); unused high bits zero.
  std::string Serialize() const;
  // Errors: DataLoss naming the offset for a wrong format byte, a count out
  // of range, a length that does not match the count, or set padding bits.
  static absl::StatusOr<VnodeBitmap> Deserialize(absl::string_view bytes);

  // "{0-63,128}/256" (ranges of consecutive set vnodes, then the count).
  std::string DebugString() const;

 private:
  // The first set vnode >= from, or vnode_count_ if none.
  int NextSetFrom(int from) const;

  int vnode_count_ = 0;
  // Bit v of words_[v / 64] is vnode v; bits >= vnode_count_ are zero.
  std::vector<uint64_t> words_;
};

}  // namespace backfill

#endif  // SERDE_VNODE_BITMAP_H_
