// Jsonb: a parsed JSON value, as a JSONB column holds it (PostgreSQL's and
// RisingWave's `jsonb`): null, true/false, a number, a string, an array, or
// an object whose keys are unique and kept in PostgreSQL's jsonb order
// (shorter keys first, then bytewise; a duplicate key keeps its last value).
// Numbers keep PostgreSQL's numeric form: exact digits and a display scale
// ("1.50" stays "1.50", "1e2" is "100", "-0" is "0").
//
//   absl::StatusOr<Jsonb> j = ParseJsonb(R"({"b": [1, 2.50], "a": null})");
//   std::string text = j->ToString();   // {"a": null, "b": [1, 2.50]}
//   Jsonb k = Jsonb::Object({{"x", Jsonb::Int(1)}});
//
// ToString is the canonical text (PostgreSQL's jsonb output: ", " between
// elements and members, ": " after keys); ParseJsonb(ToString()) gives the
// same value back, and ToString of a parsed value is a fixed point.
// Immutable; copies share their parts. Thread-safe.
#ifndef SERDE_JSONB_H_
#define SERDE_JSONB_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace backfill {

struct JsonbMember;

class Jsonb {
 public:
  enum class Kind : uint8_t { kNull, kBool, kNumber, kString, kArray, kObject };

  // Limits of what ParseJsonb and Number accept (PostgreSQL's numeric has
  // the same display-scale limit; the nesting limit keeps parsing and
  // printing within a bounded stack).
  static constexpr int kMaxDepth = 256;
  static constexpr int kMaxNumberExponent = 1000;  // |e| in "1e<e>"
  static constexpr int kMaxNumberScale = 16383;    // digits after the point

  Jsonb() = default;  // JSON null
  static Jsonb Bool(bool value);
  static Jsonb Int(int64_t value);
  // A number from JSON number text ("-1.5e3"), canonicalised.
  // Errors: InvalidArgument for text that is not a JSON number or exceeds
  // the limits above.
  static absl::StatusOr<Jsonb> Number(absl::string_view json_number);
  // REQUIRES: `value` is valid UTF-8 without NUL bytes (assert).
  static Jsonb String(std::string value);
  static Jsonb Array(std::vector<Jsonb> elements);
  // Sorts the members into jsonb key order; of members with equal keys the
  // last one stays. REQUIRES: keys are valid UTF-8 without NUL bytes.
  static Jsonb Object(std::vector<JsonbMember> members);

  Kind kind() const { return kind_; }
  // REQUIRES: kind() == kBool.
  bool bool_value() const { return bool_; }
  // The canonical number text. REQUIRES: kind() == kNumber.
  const std::string& number_text() const;
  // REQUIRES: kind() == kString.
  const std::string& string_value() const;
  // Empty unless kind() is kArray / kObject.
  absl::Span<const Jsonb> elements() const;
  absl::Span<const JsonbMember> members() const;

  // The canonical text; AppendTo appends it.
  std::string ToString() const;
  void AppendTo(std::string* out) const;

  // Same value: equal kinds and parts (numbers by their canonical text, so
  // 1.5 != 1.50, as their texts differ).
  friend bool operator==(const Jsonb& a, const Jsonb& b);
  friend bool operator!=(const Jsonb& a, const Jsonb& b) { return !(a == b); }

 private:
  friend class JsonbParser;  // jsonb.cc's ParseJsonb
  struct Node;
  // A number from text that ParseNumber (jsonb.cc) already canonicalised.
  static Jsonb CanonicalNumber(std::string canonical);
  Jsonb(Kind kind, std::shared_ptr<const Node> node)
      : kind_(kind), node_(std::move(node)) {}

  Kind kind_ = Kind::kNull;
  bool bool_ = false;
  std::shared_ptr<const Node> node_;  // numbers, strings, arrays, objects
};

struct JsonbMember {
  std::string key;
  Jsonb value;
};

// Orders by canonical text (RisingWave orders jsonb the same way); a total
// order, consistent with ==, but not a SQL order: JSONB is not a key type.
int CompareJsonb(const Jsonb& a, const Jsonb& b);

// Parses JSON text (RFC 8259: whitespace around tokens, strings with the
// JSON escapes, \uXXXX with surrogate pairs). Rejected, as PostgreSQL
// rejects them: \u0000, unpaired surrogates, invalid UTF-8, control
// characters inside strings, trailing text; and values nested deeper than
// kMaxDepth or numbers beyond the limits above.
// Errors: InvalidArgument "invalid JSONB at offset N: <what was expected>".
absl::StatusOr<Jsonb> ParseJsonb(absl::string_view text);

}  // namespace backfill

#endif  // SERDE_JSONB_H_
