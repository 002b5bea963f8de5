// Test-only storage fault injection for //tools:backfill
// (--inject_storage_faults=SPEC): a small text spec of which file operations
// of the RocksDB state store fail, and a FaultInjector that follows it.
//
//   BACKFILL_ASSIGN_OR_RETURN(std::vector<StorageFaultSpec> specs,
//                             ParseStorageFaultSpecs("op=sync,after=10,count=2"));
//   store_options.fault_injector = std::make_shared<SpecFaultInjector>(specs);
//
// Grammar: SPEC[;SPEC...], each SPEC a comma-separated list of
//   op=read|write|sync|full_disk   which operations (required). full_disk is
//                                  writes failing with ENOSPC ("No space left
//                                  on device"); the others fail with EIO.
//   file=SUBSTRING                 only files whose path contains it (".sst",
//                                  ".log", "MANIFEST"); default every file
//   after=N                        the first N matching operations succeed
//                                  (default 0)
//   count=K                        then K of them fail, then the fault clears
//                                  (default 1, >= 1)
//   persistent                     instead of count: every later matching
//                                  operation fails (a dead or full disk)
//   probability=P                  each matching operation after the first N
//                                  fails with probability P in (0, 1]
//                                  (default 1), drawn from
//   seed=S                         a seeded generator (default 1)
// Operations are counted while the injector is armed (the command arms it
// once the store is first open, so `after` counts from the job's start),
// across store reopens.
#ifndef TOOLS_STORAGE_FAULT_SPEC_H_
#define TOOLS_STORAGE_FAULT_SPEC_H_

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/rocksdb/rocksdb_state_store.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {

struct StorageFaultSpec {
  // The operation that fails (kWrite for full_disk).
  FaultInjector::Operation operation = FaultInjector::Operation::kWrite;
  // Writes fail with "No space left on device" (ResourceExhausted) instead
  // of an I/O error.
  bool no_space = false;
  // Only files whose path contains this; empty = every file.
  std::string file;
  // Matching operations that succeed before the first fault.
  uint64_t after = 0;
  // Faults before the spec clears; nullopt = persistent.
  std::optional<uint64_t> count = 1;
  // Chance that an eligible operation fails, in (0, 1].
  double probability = 1;
  uint64_t seed = 1;
  // The spec as written (for messages).
  std::string text;
};

// Parses SPEC[;SPEC...] (grammar in the file comment). Errors:
// InvalidArgument naming the offending key and value.
absl::StatusOr<std::vector<StorageFaultSpec>> ParseStorageFaultSpecs(
    absl::string_view text);

// Fails file operations as the specs say. Thread-safe.
class SpecFaultInjector final : public FaultInjector {
 public:
  explicit SpecFaultInjector(std::vector<StorageFaultSpec> specs);

  // The first spec that fires decides: an Internal error (EIO) or, for
  // full_disk, ResourceExhausted ("No space left on device"), naming the
  // operation, the file and the spec.
  absl::Status Check(Operation operation, absl::string_view file_name) override;

  // Faults injected so far, all specs.
  uint64_t injected() const;

  // While disarmed (armed is the default) every operation succeeds and none
  // is counted.
  void SetArmed(bool armed);

 private:
  struct State {
    StorageFaultSpec spec;
    uint64_t seen = 0;
    uint64_t fired = 0;
    std::mt19937_64 random;
  };
  mutable Mutex mu_;
  std::vector<State> states_ ABSL_GUARDED_BY(mu_);
  uint64_t injected_ ABSL_GUARDED_BY(mu_) = 0;
  bool armed_ ABSL_GUARDED_BY(mu_) = true;
};

// "read", "write", "sync".
absl::string_view FaultOperationName(FaultInjector::Operation operation);

}  // namespace backfill

#endif  // TOOLS_STORAGE_FAULT_SPEC_H_
