// A rocksdb::FileSystem that asks a FaultInjector (storage/rocksdb/options.h)
// before every read, write and sync of a file, and fails the operation with
// the injector's error: an I/O error, or a full disk (NoSpace) for
// ResourceExhausted. Everything else goes to the wrapped file system.
//
//   std::shared_ptr<rocksdb::FileSystem> fs = NewFaultInjectingFileSystem(
//       rocksdb::FileSystem::Default(), options.fault_injector);
//   std::unique_ptr<rocksdb::Env> env = rocksdb::NewCompositeEnv(fs);
//
// Thread-safe if the injector is.
#ifndef STORAGE_ROCKSDB_FAULT_INJECTING_FILE_SYSTEM_H_
#define STORAGE_ROCKSDB_FAULT_INJECTING_FILE_SYSTEM_H_

#include <memory>

#include "rocksdb/file_system.h"
#include "storage/rocksdb/options.h"

namespace backfill {
namespace rocksdb_internal {

// REQUIRES: base and injector non-null.
std::shared_ptr<rocksdb::FileSystem> NewFaultInjectingFileSystem(
    std::shared_ptr<rocksdb::FileSystem> base,
    std::shared_ptr<FaultInjector> injector);

}  // namespace rocksdb_internal
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_FAULT_INJECTING_FILE_SYSTEM_H_
