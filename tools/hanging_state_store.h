// A test-only fault for //tools:backfill_cluster's worker role
// (--hang_actors_on_sigusr1): a StateStore whose table instances block every
// call for good once the switch is armed, while the rest of the process (its
// gRPC threads, its lease) goes on. A worker whose actors hang this way still
// answers its peers: only the barriers it holds up show the fault.
//
//   HangingStateStore hanging(store);
//   signal(SIGUSR1, [](int) { ActorHang::Arm(); });   // async-signal-safe
//   ActorWorker::Start({.store = &hanging, ...});
//
// The switch is process-wide. Thread-safety: as the wrapped store.
#ifndef TOOLS_HANGING_STATE_STORE_H_
#define TOOLS_HANGING_STATE_STORE_H_

#include <memory>

#include "storage/forwarding_state_store.h"
#include "storage/state_store.h"

namespace backfill {

// The process-wide switch.
class ActorHang {
 public:
  // From now on every call into a HangingStateStore's table instance blocks
  // until Release. Async-signal-safe (one atomic store).
  static void Arm();
  // Unblocks them (for tests: a process under the fault is killed, not
  // released).
  static void Release();
  static bool armed();
  // Calls blocked now.
  static int blocked();
};

// Forwards to `inner`; the table instances it creates block each call while
// ActorHang is armed (polling the switch every 10 ms).
class HangingStateStore : public ForwardingStateStore {
 public:
  // `inner` must outlive this store.
  explicit HangingStateStore(StateStore* inner) : ForwardingStateStore(inner) {}

  absl::StatusOr<std::unique_ptr<LocalStateStore>> NewLocalStateStore(
      TableId table_id, const LocalOptions& options) override;
};

}  // namespace backfill

#endif  // TOOLS_HANGING_STATE_STORE_H_
