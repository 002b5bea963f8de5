#include "serde/vnode_bitmap.h"

#include <cassert>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace backfill {
namespace {

// Serialisation format byte. Never change: persisted.
constexpr uint8_t kFormatV1 = 0x01;
constexpr size_t kHeaderSize = 5;

absl::Status CheckCount(int vnode_count) {
  if (vnode_count < 1 || vnode_count > kMaxVnodeCount) {
    return absl::InvalidArgumentError(absl::StrCat(
        "vnode count must be in [1, ", kMaxVnodeCount, "], got ", vnode_count));
  }
  return absl::OkStatus();
}

}  // namespace

VnodeBitmap::VnodeBitmap(int vnode_count)
    : vnode_count_(vnode_count), words_((vnode_count + 63) / 64, 0) {
  assert(vnode_count >= 1 && vnode_count <= kMaxVnodeCount);
}

absl::StatusOr<VnodeBitmap> VnodeBitmap::Create(int vnode_count) {
  if (absl::Status status = CheckCount(vnode_count); !status.ok())
    return status;
  return VnodeBitmap(vnode_count);
}

VnodeBitmap VnodeBitmap::All(int vnode_count) {
  return FromRange(vnode_count, 0, vnode_count);
}

VnodeBitmap VnodeBitmap::Singleton() { return All(1); }

VnodeBitmap VnodeBitmap::FromRange(int vnode_count, int begin, int end) {
  assert(0 <= begin && begin <= end && end <= vnode_count);
  VnodeBitmap bitmap(vnode_count);
  for (int v = begin; v < end;) {
    if (v % 64 == 0 && end - v >= 64) {
      bitmap.words_[v / 64] = ~uint64_t{0};
      v += 64;
    } else {
      bitmap.words_[v / 64] |= uint64_t{1} << (v % 64);
      ++v;
    }
  }
  return bitmap;
}

absl::StatusOr<std::vector<VnodeBitmap>> VnodeBitmap::EvenSplit(
    int vnode_count, int num_actors) {
  if (absl::Status status = CheckCount(vnode_count); !status.ok())
    return status;
  if (num_actors < 1 || num_actors > vnode_count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "cannot split ", vnode_count, " vnodes among ", num_actors, " actors"));
  }
  std::vector<VnodeBitmap> parts;
  parts.reserve(num_actors);
  const int base = vnode_count / num_actors;
  const int extra = vnode_count % num_actors;
  int begin = 0;
  for (int actor = 0; actor < num_actors; ++actor) {
    const int end = begin + base + (actor < extra ? 1 : 0);
    parts.push_back(FromRange(vnode_count, begin, end));
    begin = end;
  }
  assert(begin == vnode_count);
  return parts;
}

void VnodeBitmap::Set(VirtualNode vnode) {
  assert(vnode < vnode_count_);
  words_[vnode / 64] |= uint64_t{1} << (vnode % 64);
}

void VnodeBitmap::Reset(VirtualNode vnode) {
  assert(vnode < vnode_count_);
  words_[vnode / 64] &= ~(uint64_t{1} << (vnode % 64));
}

int VnodeBitmap::Count() const {
  int count = 0;
  for (uint64_t word : words_) count += std::popcount(word);
  return count;
}

VnodeBitmap VnodeBitmap::Union(const VnodeBitmap& a, const VnodeBitmap& b) {
  assert(a.vnode_count_ == b.vnode_count_);
  VnodeBitmap result = a;
  for (size_t i = 0; i < result.words_.size(); ++i)
    result.words_[i] |= b.words_[i];
  return result;
}

VnodeBitmap VnodeBitmap::Intersection(const VnodeBitmap& a,
                                      const VnodeBitmap& b) {
  assert(a.vnode_count_ == b.vnode_count_);
  VnodeBitmap result = a;
  for (size_t i = 0; i < result.words_.size(); ++i)
    result.words_[i] &= b.words_[i];
  return result;
}

VnodeBitmap VnodeBitmap::Difference(const VnodeBitmap& a,
                                    const VnodeBitmap& b) {
  assert(a.vnode_count_ == b.vnode_count_);
  VnodeBitmap result = a;
  for (size_t i = 0; i < result.words_.size(); ++i)
    result.words_[i] &= ~b.words_[i];
  return result;
}

int VnodeBitmap::NextSetFrom(int from) const {
  if (from >= vnode_count_) return vnode_count_;
  size_t word_index = static_cast<size_t>(from) / 64;
  uint64_t word = words_[word_index] & (~uint64_t{0} << (from % 64));
  while (word == 0) {
    if (++word_index == words_.size()) return vnode_count_;
    word = words_[word_index];
  }
  return static_cast<int>(word_index * 64 + std::countr_zero(word));
}

std::vector<VirtualNode> VnodeBitmap::ToVector() const {
  std::vector<VirtualNode> vnodes;
  vnodes.reserve(Count());
  for (VirtualNode v : set_vnodes()) vnodes.push_back(v);
  return vnodes;
}

std::string VnodeBitmap::Serialize() const {
  const size_t bytes = (static_cast<size_t>(vnode_count_) + 7) / 8;
  std::string out(kHeaderSize + bytes, '\0');
  out[0] = static_cast<char>(kFormatV1);
  const uint32_t count = static_cast<uint32_t>(vnode_count_);
  std::memcpy(out.data() + 1, &count, 4);
  for (size_t i = 0; i < bytes; ++i) {
    out[kHeaderSize + i] = static_cast<char>(words_[i / 8] >> (8 * (i % 8)));
  }
  return out;
}

absl::StatusOr<VnodeBitmap> VnodeBitmap::Deserialize(absl::string_view bytes) {
  auto corrupt = [](absl::string_view what, size_t offset) {
    return absl::DataLossError(
        absl::StrCat("vnode bitmap: ", what, " at offset ", offset));
  };
  if (bytes.size() < kHeaderSize) {
    return corrupt(absl::StrCat("truncated header, expected ", kHeaderSize,
                                " bytes, got ", bytes.size()),
                   0);
  }
  if (static_cast<uint8_t>(bytes[0]) != kFormatV1) {
    return corrupt(
        absl::StrCat("unknown format byte ",
                     static_cast<int>(static_cast<uint8_t>(bytes[0]))),
        0);
  }
  uint32_t count;
  std::memcpy(&count, bytes.data() + 1, 4);
  if (count < 1 || count > static_cast<uint32_t>(kMaxVnodeCount)) {
    return corrupt(absl::StrCat("vnode count ", count, " not in [1, ",
                                kMaxVnodeCount, "]"),
                   1);
  }
  const size_t expected = kHeaderSize + (count + 7) / 8;
  if (bytes.size() != expected) {
    return corrupt(absl::StrCat("length ", bytes.size(), " does not match ",
                                expected, " for ", count, " vnodes"),
                   std::min(bytes.size(), expected));
  }
  VnodeBitmap bitmap(static_cast<int>(count));
  for (size_t i = kHeaderSize; i < bytes.size(); ++i) {
    const size_t byte_index = i - kHeaderSize;
    const uint64_t byte = static_cast<uint8_t>(bytes[i]);
    bitmap.words_[byte_index / 8] |= byte << (8 * (byte_index % 8));
  }
  if (count % 8 != 0) {
    const uint8_t last = static_cast<uint8_t>(bytes.back());
    if ((last >> (count % 8)) != 0) {
      return corrupt(absl::StrCat("padding bits set beyond vnode ", count - 1),
                     bytes.size() - 1);
    }
  }
  return bitmap;
}

std::string VnodeBitmap::DebugString() const {
  std::vector<std::string> ranges;
  int v = NextSetFrom(0);
  while (v < vnode_count_) {
    int end = v;
    while (end + 1 < vnode_count_ && Test(static_cast<VirtualNode>(end + 1)))
      ++end;
    ranges.push_back(v == end ? absl::StrCat(v) : absl::StrCat(v, "-", end));
    v = NextSetFrom(end + 1);
  }
  return absl::StrCat("{", absl::StrJoin(ranges, ","), "}/", vnode_count_);
}

}  // namespace backfill
