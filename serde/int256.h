// Int256: RisingWave's INT256, a 256-bit two's-complement integer in
// [-2^255, 2^255 - 1], with decimal text.
//
//   Int256 a = Int256::FromInt64(-5);
//   absl::StatusOr<Int256> b = Int256::FromString(
//       "57896044618658097711785492504343953926634992332820282019728792003956564819967");
//   bool less = a < *b;                             // true (b is the maximum)
//   std::string text = a.ToString();                // "-5"
#ifndef SERDE_INT256_H_
#define SERDE_INT256_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace backfill {

class Int256 {
 public:
  // Zero.
  constexpr Int256() = default;

  static Int256 FromInt64(int64_t value);
  // From the four 64-bit words of the two's-complement value, least
  // significant first.
  static constexpr Int256 FromWords(std::array<uint64_t, 4> words) {
    Int256 value;
    value.words_ = words;
    return value;
  }
  static constexpr Int256 Min() {
    return FromWords({0, 0, 0, uint64_t{1} << 63});
  }
  static constexpr Int256 Max() {
    return FromWords(
        {~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0}, ~uint64_t{0} >> 1});
  }

  // "[+-]digits" (decimal, no spaces, at least one digit; leading zeros
  // allowed), as RisingWave reads INT256 text.
  // Errors: InvalidArgument naming the text, for any other text or a value
  // outside [-2^255, 2^255 - 1].
  static absl::StatusOr<Int256> FromString(absl::string_view text);

  // Decimal, "-" for negative values, no leading zeros: "0", "-42".
  std::string ToString() const;

  const std::array<uint64_t, 4>& words() const { return words_; }
  bool negative() const { return (words_[3] >> 63) != 0; }

  // The 32 bytes of the two's-complement value, least significant first
  // (`out` has room for 32), and back.
  void ToLittleEndian(char* out) const;
  static Int256 FromLittleEndian(const char* bytes);

  // <0, 0, >0 as the signed values compare.
  int Compare(const Int256& other) const;
  friend bool operator==(const Int256& a, const Int256& b) {
    return a.words_ == b.words_;
  }
  friend bool operator<(const Int256& a, const Int256& b) {
    return a.Compare(b) < 0;
  }

 private:
  std::array<uint64_t, 4> words_ = {0, 0, 0, 0};
};

}  // namespace backfill

#endif  // SERDE_INT256_H_
