// The epoch-versioned state store: the interface (no implementation types).
//
// Keys are (table id, vnode, pk bytes) and values are opaque bytes; every
// version is tagged with the epoch that wrote it. Two implementations:
// MemoryStateStore (reference, storage/memory_state_store.h) and
// RocksDbStateStore (embedded default, storage/rocksdb/rocksdb_state_store.h).
//
//   std::unique_ptr<StateStore> store = ...;
//   auto local = store->NewLocalStateStore(table_id, LocalOptions{}).value();
//   local->Init(EpochPair::ForInitial(Epoch(2)));      // current epoch 2
//   local->Insert(vnode, pk, value);                   // into epoch 2
//   local->Seal(EpochPair{Epoch(3), Epoch(2)});        // batch for epoch 2
//   store->Checkpoint(Epoch(2));                       // committed epoch 2
//
// Who calls what:
//  * The runtime (barrier coordinator) owns the StateStore, calls Checkpoint
//    after every actor has sealed a checkpoint epoch, and recovers from a
//    crash by destroying every LocalStateStore and creating new ones (their
//    uncommitted data is discarded: the store reverts to the last checkpoint).
//  * Each actor owns one LocalStateStore per table it writes or reads (state
//    tables are built on top): Init once, then per barrier writes and Seal.
//  * The backfill executor owns a *replicated* LocalStateStore of the upstream
//    table: it writes the upstream changes it receives, and reads its snapshot
//    through it; its batches are never committed (the upstream commits them).
//
// Thread-safety: StateStore is thread-safe. A LocalStateStore and an iterator
// are used by one thread at a time (they may move between threads); they
// stay valid while the StateStore that made them is alive (the store must
// outlive them).
//
// Committed epoch: one store-wide committed epoch, persisted with every
// checkpoint; CommittedEpoch(table) returns it for every table, including a
// table that has no instance yet (its data at that epoch is simply empty).
// Epoch(0) means "never checkpointed".
#ifndef STORAGE_STATE_STORE_H_
#define STORAGE_STATE_STORE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "serde/vnode.h"
#include "storage/cancellation.h"
#include "storage/epoch.h"
#include "storage/table_key.h"
#include "third_party/absl_extras/clock.h"

namespace backfill {

// A forward iterator over the live rows of one (table, vnode) within a
// PkRange, as of one read epoch, in pk byte order. LevelDB-shaped:
//
// clang-format off
//   for (it->SeekToFirst(); it->Valid(); it->Next()) Use(it->key(), it->value());
//   BACKFILL_RETURN_IF_ERROR(it->status());
// clang-format on
//
// key() and value() are views valid until the next move (Seek*, Next) or the
// iterator's destruction. An error makes Valid() false and is sticky in
// status(). A new iterator is not positioned: call SeekToFirst or Seek.
// Not thread-safe; one thread at a time.
class StateStoreIterator {
 public:
  virtual ~StateStoreIterator() = default;

  virtual bool Valid() const = 0;
  // Positions at the first row of the range.
  virtual void SeekToFirst() = 0;
  // Positions at the first row with pk >= max(`pk`, range.inclusive_min).
  // (To start strictly after a pk p, seek to p + '\0'.)
  virtual void Seek(absl::string_view pk) = 0;
  // REQUIRES: Valid().
  virtual void Next() = 0;
  // The pk bytes of the current row. REQUIRES: Valid().
  virtual absl::string_view key() const = 0;
  // The value bytes of the current row. REQUIRES: Valid().
  virtual absl::string_view value() const = 0;
  // OK, or the first error met (sticky).
  virtual absl::Status status() const = 0;

  // The batch form of `for (k = 0; k < max_rows && Valid(); ++k, Next())
  // visit(key(), value())`: visits the current row and the rows after it,
  // moving past each row visited, until `max_rows` rows, the end or an error.
  // A visit that returns false stops the batch on its row (not moved past).
  // Returns the rows moved past. A scan makes one virtual call per batch
  // instead of four per row; this default is that loop.
  virtual size_t VisitRows(
      size_t max_rows,
      absl::FunctionRef<bool(absl::string_view key, absl::string_view value)>
          visit) {
    size_t n = 0;
    for (; n < max_rows && Valid(); ++n, Next()) {
      if (!visit(key(), value())) break;
    }
    return n;
  }
};

// Options of a scan (NewIterator).
struct ScanOptions {
  // Whether blocks read by this scan are added to the block cache (RocksDB).
  // Default true. A one-off full scan (the backfill snapshot) may set false
  // to keep the cache for the hot working set.
  bool fill_cache = true;
};

// Options of a LocalStateStore.
struct LocalOptions {
  // Default false. A replicated instance mirrors another actor's table: its
  // sealed batches are never committed, and each is dropped once the table's
  // committed epoch reaches the batch's epoch. Its writes are "inconsistent"
  // (no checks; the last write of a key in an epoch wins).
  bool replicated = false;
};

// One actor's view of one table: a write buffer for the current epoch, the
// instance's sealed (not yet committed) batches, over the committed store.
// Used by one thread at a time; destroy it to discard uncommitted writes.
class LocalStateStore {
 public:
  virtual ~LocalStateStore() = default;

  virtual TableId table_id() const = 0;
  virtual bool replicated() const = 0;

  // Sets the current epoch to `first.curr`. Does not wait: the caller must
  // have waited for CommittedEpoch(table) >= first.prev (StateStore::
  // WaitCommitted / IsCommitted) or its reads miss data.
  // Errors: FailedPrecondition if already initialised, if first.curr <=
  // first.prev (InvalidArgument), or if first.curr <= the committed epoch.
  virtual absl::Status Init(EpochPair first) = 0;

  // Writes into the current epoch's buffer; the last write of a pk wins.
  // Errors: FailedPrecondition before Init; InvalidArgument if vnode >=
  // kMaxVnodeCount.
  virtual absl::Status Insert(VirtualNode vnode, absl::string_view pk,
                              absl::string_view value) = 0;
  // Writes a tombstone (hides older versions).
  virtual absl::Status Delete(VirtualNode vnode, absl::string_view pk) = 0;

  // Reads at the current epoch: committed data merged with this instance's
  // sealed batches and its unsealed buffer (newest wins, tombstones hide).
  // Returns nullopt if absent. Errors: FailedPrecondition before Init;
  // storage errors with context.
  virtual absl::StatusOr<std::optional<std::string>> Get(
      VirtualNode vnode, absl::string_view pk) = 0;
  // Like Get, for a range of one vnode. The iterator sees the state at the
  // time of the call (later writes to this instance are not visible through
  // it) and may outlive later Seal calls; it must not outlive the store.
  virtual absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      VirtualNode vnode, const PkRange& range,
      const ScanOptions& options = {}) = 0;

  // Seals the buffer as an immutable batch of epoch `next.prev` and makes
  // `next.curr` the current epoch. A non-replicated batch is committed by the
  // first Checkpoint(e) with e >= next.prev.
  // Errors: FailedPrecondition if epoch() != next.prev (the barrier does not
  // follow the current epoch) or before Init; InvalidArgument if next.curr <=
  // next.prev. On error nothing changes.
  virtual absl::Status Seal(EpochPair next) = 0;

  // The current epoch (Epoch(0) before Init).
  virtual Epoch epoch() const = 0;
};

// The shared, committed store plus a factory of local instances.
// Thread-safe.
class StateStore {
 public:
  virtual ~StateStore() = default;

  // A new local instance of `table_id`. Instances of the same table are
  // independent: none sees another's uncommitted writes.
  virtual absl::StatusOr<std::unique_ptr<LocalStateStore>> NewLocalStateStore(
      TableId table_id, const LocalOptions& options) = 0;

  // Commits the sealed batches with epoch <= `epoch` of every non-replicated
  // instance of every table atomically (all or nothing, also across a crash),
  // then advances the committed epoch to `epoch`, drops replicated batches
  // with epoch <= `epoch`, and notifies waiters and listeners.
  // Errors: FailedPrecondition if epoch <= CommittedEpoch(), or if an
  // initialised non-replicated instance has not sealed `epoch` yet (its
  // epoch() <= `epoch`), or if an earlier checkpoint failed to write (the
  // store then refuses every further checkpoint: reopen it). Storage errors
  // (Internal, Unavailable, ...) name the operation.
  virtual absl::Status Checkpoint(Epoch epoch) = 0;

  // The committed epoch of `table_id` (store-wide; Epoch(0) if never
  // checkpointed; restored from disk by persistent stores).
  virtual Epoch CommittedEpoch(TableId table_id) const = 0;
  // CommittedEpoch(table_id) >= epoch.
  virtual bool IsCommitted(TableId table_id, Epoch epoch) const = 0;

  // Blocks until CommittedEpoch(table_id) >= epoch. Returns OK when it is,
  // DeadlineExceeded when `clock` reaches `deadline` first, Cancelled when
  // `cancellation` is cancelled first.
  virtual absl::Status WaitCommitted(TableId table_id, Epoch epoch,
                                     absl::Time deadline,
                                     Cancellation& cancellation,
                                     Clock& clock) = 0;

  // Non-blocking notification: `listener` runs (with the new committed
  // epoch) after every successful Checkpoint, on the checkpointing thread,
  // with no store lock held. It must be quick and must not add or remove
  // listeners. Returns an id for RemoveCommitListener; after
  // RemoveCommitListener returns, the listener is not running and never runs.
  virtual uint64_t AddCommitListener(std::function<void(Epoch)> listener) = 0;
  virtual void RemoveCommitListener(uint64_t id) = 0;

  // Committed reads: the newest committed version with epoch <= read_epoch
  // (never uncommitted or replicated data). Reads at read_epoch <
  // CommittedEpoch() are historical: a store may have garbage-collected the
  // versions they need, and then fails with FailedPrecondition rather than
  // return wrong data (a live iterator is never affected).
  virtual absl::StatusOr<std::optional<std::string>> Get(const TableKey& key,
                                                         Epoch read_epoch) = 0;
  virtual absl::StatusOr<std::unique_ptr<StateStoreIterator>> NewIterator(
      TableId table_id, VirtualNode vnode, const PkRange& range,
      Epoch read_epoch, const ScanOptions& options = {}) = 0;

  // Epoch pins: for a reader that needs one epoch's versions across
  // restarts (a snapshot backfill reads the upstream at a fixed epoch for
  // as long as its snapshot takes). While `owner`'s pin of `epoch` holds,
  // historical reads at `epoch` succeed: garbage collection keeps the
  // versions they need. One pin per owner; pinning again moves it. A pin
  // holds in this process at once and is persisted with the next
  // checkpoint, atomically with that checkpoint's data: a store reopened
  // after a crash holds the pins of its last checkpoint (a pin or a move
  // not yet checkpointed is lost with the crash; the owner pins again).
  // A pin is store state, not a process's: nothing releases it but
  // ReleaseEpochPin (an owner that goes away for good must release it, or
  // the store keeps every version since `epoch`).
  // Errors: InvalidArgument for an empty owner or an epoch above the
  // committed epoch; FailedPrecondition if the versions `epoch` needs may
  // already be collected (the same rule as a historical read).
  virtual absl::Status PinEpoch(absl::string_view owner, Epoch epoch) = 0;
  // Releases `owner`'s pin with the first checkpoint at or after `epoch`,
  // so that the release commits atomically with the state that stops
  // needing the pin; until then the pin holds, and a crash restores it. A
  // later PinEpoch of the owner cancels the release. Releasing an owner
  // that holds no pin is OK (releases are idempotent).
  virtual absl::Status ReleaseEpochPin(absl::string_view owner,
                                       Epoch epoch) = 0;
  // The pins in force, by owner (a pin whose release is pending included).
  virtual std::map<std::string, Epoch> EpochPins() const = 0;
};

}  // namespace backfill

#endif  // STORAGE_STATE_STORE_H_
