// Epochs: the logical time of the streaming engine. Every barrier carries an
// EpochPair; data written between two barriers belongs to the barrier's `prev`
// epoch; only checkpoint barriers make data durable (committed).
//
//   EpochPair first = EpochPair::ForInitial(Epoch(2));   // {curr 2, prev 1}
//   EpochPair next = first.Next(Epoch(3));               // {curr 3, prev 2}
//   assert(next.prev == first.curr);
#ifndef STORAGE_EPOCH_H_
#define STORAGE_EPOCH_H_

#include <compare>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"

namespace backfill {

// A strictly increasing u64 logical time. Epoch(0) is "before everything":
// the committed epoch of a store that has never checkpointed. A strong type so
// that epochs never mix with row counts or vnodes.
class Epoch {
 public:
  constexpr Epoch() = default;
  constexpr explicit Epoch(uint64_t value) : value_(value) {}

  // The smallest epoch, Epoch(0): nothing is ever written at it.
  static constexpr Epoch Zero() { return Epoch(0); }
  // The largest epoch; reading at Max() sees the newest version.
  static constexpr Epoch Max() {
    return Epoch(std::numeric_limits<uint64_t>::max());
  }

  constexpr uint64_t value() const { return value_; }

  friend constexpr auto operator<=>(Epoch a, Epoch b) = default;

  // "epoch 42".
  std::string DebugString() const { return absl::StrCat("epoch ", value_); }

  template <typename H>
  friend H AbslHashValue(H h, Epoch epoch) {
    return H::combine(std::move(h), epoch.value_);
  }

 private:
  uint64_t value_ = 0;
};

// The epochs of a barrier: data before the barrier belongs to `prev`, data
// after it to `curr`. Invariant of every well-formed pair: curr > prev.
struct EpochPair {
  Epoch curr;
  Epoch prev;

  // The pair of a first barrier at `curr` on a fresh system:
  // {curr, curr - 1}. REQUIRES: curr > Epoch(0).
  static constexpr EpochPair ForInitial(Epoch curr) {
    return EpochPair{curr, Epoch(curr.value() - 1)};
  }
  // The pair of the barrier that follows this one: {next_curr, curr}.
  constexpr EpochPair Next(Epoch next_curr) const {
    return EpochPair{next_curr, curr};
  }
  constexpr bool IsWellFormed() const { return curr > prev; }

  friend constexpr bool operator==(const EpochPair&,
                                   const EpochPair&) = default;

  // "{curr 3, prev 2}".
  std::string DebugString() const {
    return absl::StrCat("{curr ", curr.value(), ", prev ", prev.value(), "}");
  }
};

// The kind of a barrier. Only kCheckpoint makes the data of `prev` durable.
enum class BarrierKind {
  kInitial,     // The first barrier of a job after start or recovery.
  kBarrier,     // Seals an epoch; the data stays uncommitted.
  kCheckpoint,  // Seals an epoch and commits everything sealed up to it.
};

}  // namespace backfill

#endif  // STORAGE_EPOCH_H_
