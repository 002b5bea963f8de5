// FaultInjectingStateStore: a StateStore decorator that fails the k-th call
// of a chosen operation with an error, for crash tests inside barrier
// processing and checkpoints. Wraps any StateStore, every LocalStateStore it
// makes and every iterator those make. testonly.
//
//   auto plan = std::make_shared<FaultPlan>();
//   FaultInjectingStateStore store(*inner, plan);
//   plan->Arm(FaultOp::kSeal, 3);   // the 3rd Seal from now fails
//   ...                             // components use `store`
//   if (plan->fired()) { /* crash and recover */ }
//
// A failed operation does not reach the wrapped store (nothing changes),
// except kCheckpointAfterCommit: the checkpoint is committed, then reported
// as failed (an ambiguous commit; recovery must read CommittedEpoch()).
// A failing iterator move makes the iterator invalid with a sticky error.
// Every injected error is Unavailable and its message starts with
// "injected fault #<n>: <operation>" so a test can tell it from others.
//
// Thread-safety: as the wrapped store; the plan is thread-safe.
#ifndef TESTS_SIMULATION_FAULT_INJECTING_STATE_STORE_H_
#define TESTS_SIMULATION_FAULT_INJECTING_STATE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "storage/forwarding_state_store.h"
#include "storage/state_store.h"
#include "third_party/absl_extras/mutex.h"

namespace backfill {
namespace simulation {

// The operations a plan can fail.
enum class FaultOp {
  kInit,          // LocalStateStore::Init (a table's init_epoch)
  kInsert,        // LocalStateStore::Insert
  kDelete,        // LocalStateStore::Delete
  kSeal,          // LocalStateStore::Seal
  kGet,           // LocalStateStore::Get and StateStore::Get
  kNewIterator,   // LocalStateStore::NewIterator and StateStore::NewIterator
  kIteratorMove,  // StateStoreIterator::SeekToFirst / Seek / Next
  kCheckpoint,    // StateStore::Checkpoint, before committing
  kCheckpointAfterCommit,  // StateStore::Checkpoint, after committing
};

// "Insert", "Seal", "Checkpoint(after commit)", ...
const char* FaultOpName(FaultOp op);

// Which call fails. Thread-safe.
class FaultPlan {
 public:
  // The `nth` (>= 1) call of `op` from now fails, once; replaces any earlier
  // arming.
  void Arm(FaultOp op, uint64_t nth);
  void Disarm();
  bool armed() const;
  // The `nth` (>= 1) call of `op` from now blocks until ReleaseHangs(), then
  // fails as Arm's would: an actor stuck in a storage call while its
  // process lives on. Replaces any earlier arming.
  void ArmHang(FaultOp op, uint64_t nth);
  // Lets the hung call go (or disarms a hang not fired yet); a later
  // ArmHang blocks again. Call it before
  // what waits for the hung actor (its worker's shutdown) is destroyed.
  void ReleaseHangs();
  // Whether a call is blocked by ArmHang now.
  bool hanging() const;

  // Called by the decorator for each operation: an error iff this call is
  // the armed one (which disarms the plan). `what` names the call.
  absl::Status Check(FaultOp op, absl::string_view what);

  // A deliberate defect for the simulation's self-test (keep_view_on_crash):
  // the uncommitted writes of table `table_id` outlive the instance that
  // made them. When an instance of the table is destroyed, its writes in
  // epochs after the committed one are stashed; the next instance of the
  // table replays them right after its Init, as a runtime that did not
  // revert the table at a recovery would.
  void KeepUncommittedWritesOf(TableId table_id);
  bool KeepsUncommittedWritesOf(TableId table_id) const;
  struct KeptWrite {
    Epoch epoch;
    VirtualNode vnode = 0;
    std::string pk;
    std::optional<std::string> value;  // none: a delete
  };
  void StashWrites(TableId table_id, std::vector<KeptWrite> writes);
  std::vector<KeptWrite> TakeStashedWrites(TableId table_id);

  // The number of faults injected so far.
  uint64_t num_fired() const;
  // The message of the last injected fault ("" if none).
  std::string last_message() const;
  // True once a fault fired since the last TakeFired(); clears the flag.
  bool TakeFired();

 private:
  mutable Mutex mu_;
  std::optional<FaultOp> op_ ABSL_GUARDED_BY(mu_);
  uint64_t remaining_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t num_fired_ ABSL_GUARDED_BY(mu_) = 0;
  bool fired_ ABSL_GUARDED_BY(mu_) = false;
  bool hang_ ABSL_GUARDED_BY(mu_) = false;  // The armed call blocks.
  bool hanging_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t releases_ ABSL_GUARDED_BY(mu_) = 0;
  CondVar released_;
  std::string last_message_ ABSL_GUARDED_BY(mu_);
  std::optional<TableId> kept_table_ ABSL_GUARDED_BY(mu_);
  std::map<TableId, std::vector<KeptWrite>> stashed_ ABSL_GUARDED_BY(mu_);
};

class FaultInjectingStateStore final : public ForwardingStateStore {
 public:
  // REQUIRES: `inner` outlives this store; plan != nullptr.
  FaultInjectingStateStore(StateStore& inner, std::shared_ptr<FaultPlan> plan);

  absl::StatusOr<std::unique_ptr<LocalStateStore>> NewLocalStateStore(
      TableId table_id, const LocalOptions& options) override;
  absl::Status Checkpoint(Epoch epoch) override;
  absl::StatusOr<std::optional<std::string>> Get(const TableKey& key,
                                                 Epoch read_epoch) override;
  absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      TableId table_id, VirtualNode vnode, const PkRange& range,
      Epoch read_epoch, const ScanOptions& options = {}) override;

  FaultPlan& plan() const { return *plan_; }

 private:
  std::shared_ptr<FaultPlan> plan_;
};

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_FAULT_INJECTING_STATE_STORE_H_
