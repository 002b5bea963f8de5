// What every fuzz target (cc_fuzz_test in fuzz.bzl, which links this in)
// shares: how a property failure becomes a finding, the verbose switch, and
// a seed drawn from the input for the randomness an input drives.
//
//   FuzzCheck(decoded.ok() || decoded.status().code() == kDataLoss,
//             "bad bytes are DataLoss", decoded.status());
//   if (FuzzVerbose()) std::printf("rejected\n");
//   std::mt19937_64 rng(FuzzSeed(input));
#ifndef THIRD_PARTY_FUZZING_FUZZ_CHECK_H_
#define THIRD_PARTY_FUZZING_FUZZ_CHECK_H_

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace backfill {

// A property every input must keep. When `condition` is false, prints
// "<program>: property violated: <what>" (with `status` unless it is OK)
// and aborts: a finding under libFuzzer, a failure of the corpus replay.
inline void FuzzCheck(bool condition, const char* what,
                      const absl::Status& status = absl::OkStatus()) {
  if (condition) return;
  if (status.ok()) {
    std::fprintf(stderr, "%s: property violated: %s\n",
                 program_invocation_short_name, what);
  } else {
    std::fprintf(stderr, "%s: property violated: %s (%s)\n",
                 program_invocation_short_name, what,
                 status.ToString().c_str());
  }
  std::abort();
}

// BACKFILL_FUZZ_VERBOSE set: a target logs one line per input saying what
// happened to it.
inline bool FuzzVerbose() {
  static const bool verbose = std::getenv("BACKFILL_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

// A seed that is a function of the input bytes (64-bit FNV-1a).
inline uint64_t FuzzSeed(absl::string_view input) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (char c : input) {
    h = (h ^ static_cast<uint8_t>(c)) * 0x100000001b3ull;
  }
  return h;
}

}  // namespace backfill

#endif  // THIRD_PARTY_FUZZING_FUZZ_CHECK_H_
