// The in-memory state store: the reference implementation of StateStore
// (storage/state_store.h), simple enough to be obviously right. Committed
// data is a std::map of every version; nothing is ever garbage-collected,
// so historical reads always succeed. Nothing is persisted: the store's
// lifetime is the process's.
//
//   std::unique_ptr<StateStore> store = NewMemoryStateStore();
//   auto local = store->NewLocalStateStore(table_id, {}).value();
#ifndef STORAGE_MEMORY_STATE_STORE_H_
#define STORAGE_MEMORY_STATE_STORE_H_

#include <memory>

#include "storage/state_store.h"

namespace backfill {

// A new, empty store (committed epoch 0). Thread-safe like every StateStore.
std::unique_ptr<StateStore> NewMemoryStateStore();

}  // namespace backfill

#endif  // STORAGE_MEMORY_STATE_STORE_H_
