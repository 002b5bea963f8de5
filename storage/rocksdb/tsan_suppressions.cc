// ThreadSanitizer suppressions for tests that link Debian's librocksdb. The
// library is not built with -fsanitize=thread: its lock-free structures
// (memtable skiplist, version reference counts) publish with atomics TSan
// cannot see, so it reports races between RocksDB's own threads and readers
// inside RocksDB (the same reason the project avoids absl::Mutex). Only
// reports with a frame in those libraries are suppressed; our code's races
// elsewhere are still reported. Linked into tests only; a no-op without TSan.
extern "C" const char* __tsan_default_suppressions() {
  // RocksDB, and the compression libraries it calls on its background
  // threads (their frames are all a truncated stack shows).
  return "race:librocksdb.so\n"
         "called_from_lib:librocksdb.so\n"
         "race:libsnappy.so\n"
         "race:liblz4.so\n"
         "race:libzstd.so\n"
         "race:libz.so\n"
         "race:libbz2.so\n";
}
