#include "serde/int256.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "absl/numeric/int128.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace backfill {
namespace {

static_assert(std::endian::native == std::endian::little,
              "Int256 copies its words as little-endian bytes");

using Words = std::array<uint64_t, 4>;

// Two's-complement negation (wraps for the minimum, which is its own
// negation as an unsigned magnitude: 2^255).
Words Negate(Words words) {
  uint64_t carry = 1;
  for (uint64_t& word : words) {
    const uint64_t inverted = ~word;
    word = inverted + carry;
    carry = carry != 0 && word == 0 ? 1 : 0;
  }
  return words;
}

// words = words * 10 + digit as a 256-bit unsigned number; false on
// overflow past 2^256.
bool MultiplyAdd(Words& words, uint64_t multiplier, uint64_t addend) {
  absl::uint128 carry = addend;
  for (uint64_t& word : words) {
    const absl::uint128 product = absl::uint128(word) * multiplier + carry;
    word = absl::Uint128Low64(product);
    carry = absl::Uint128High64(product);
  }
  return carry == 0;
}

// words /= divisor as a 256-bit unsigned number; returns the remainder.
uint64_t DivideInPlace(Words& words, uint64_t divisor) {
  absl::uint128 remainder = 0;
  for (int i = 3; i >= 0; --i) {
    const absl::uint128 current = (remainder << 64) | words[i];
    words[i] = absl::Uint128Low64(current / divisor);
    remainder = current % divisor;
  }
  return absl::Uint128Low64(remainder);
}

bool IsZero(const Words& words) {
  return (words[0] | words[1] | words[2] | words[3]) == 0;
}

}  // namespace

Int256 Int256::FromInt64(int64_t value) {
  const uint64_t fill = value < 0 ? ~uint64_t{0} : 0;
  return FromWords({static_cast<uint64_t>(value), fill, fill, fill});
}

absl::StatusOr<Int256> Int256::FromString(absl::string_view text) {
  auto invalid = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid INT256 \"", absl::CHexEscape(text.substr(0, 100)),
                     text.size() > 100 ? "..." : "", "\": ", why));
  };
  absl::string_view digits = text;
  bool negative = false;
  if (!digits.empty() && (digits[0] == '+' || digits[0] == '-')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (digits.empty()) return invalid("no digits");
  Words magnitude = {0, 0, 0, 0};
  for (char c : digits) {
    if (c < '0' || c > '9') return invalid("not a decimal integer");
    if (!MultiplyAdd(magnitude, 10, static_cast<uint64_t>(c - '0'))) {
      return invalid("out of range");
    }
  }
  // The magnitude may be at most 2^255 (negative) or 2^255 - 1.
  const bool top_bit = (magnitude[3] >> 63) != 0;
  if (top_bit) {
    const bool exactly_min = magnitude[3] == (uint64_t{1} << 63) &&
                             (magnitude[0] | magnitude[1] | magnitude[2]) == 0;
    if (!negative || !exactly_min) return invalid("out of range");
  }
  return FromWords(negative ? Negate(magnitude) : magnitude);
}

std::string Int256::ToString() const {
  Words magnitude = negative() ? Negate(words_) : words_;
  if (IsZero(magnitude)) return "0";
  // Chunks of 19 decimal digits, least significant first.
  constexpr uint64_t kChunk = 10'000'000'000'000'000'000ULL;
  std::string digits;
  while (!IsZero(magnitude)) {
    uint64_t chunk = DivideInPlace(magnitude, kChunk);
    for (int i = 0; i < 19; ++i) {
      digits.push_back(static_cast<char>('0' + chunk % 10));
      chunk /= 10;
    }
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  if (negative()) digits.push_back('-');
  std::reverse(digits.begin(), digits.end());
  return digits;
}

void Int256::ToLittleEndian(char* out) const {
  std::memcpy(out, words_.data(), 32);
}

Int256 Int256::FromLittleEndian(const char* bytes) {
  Int256 value;
  std::memcpy(value.words_.data(), bytes, 32);
  return value;
}

int Int256::Compare(const Int256& other) const {
  if (negative() != other.negative()) return negative() ? -1 : 1;
  for (int i = 3; i >= 0; --i) {
    if (words_[i] != other.words_[i]) {
      return words_[i] < other.words_[i] ? -1 : 1;
    }
  }
  return 0;
}

}  // namespace backfill
