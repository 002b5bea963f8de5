// Test-only raw access to a RocksDbStateStore directory, written from
// FORMAT.md alone (an independent implementation of the persisted layout):
// the benchmark's physical-limit scan and the corruption tests use it. Never
// open a directory a live store has open.
#ifndef STORAGE_ROCKSDB_RAW_ROCKSDB_FOR_TEST_H_
#define STORAGE_ROCKSDB_RAW_ROCKSDB_FOR_TEST_H_

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "rocksdb/cache.h"
#include "rocksdb/comparator.h"
#include "rocksdb/db.h"
#include "rocksdb/options.h"
#include "rocksdb/table.h"

namespace backfill {
namespace raw_rocksdb_for_test {

// FORMAT.md: user key bytewise, then the 8-byte suffix bytewise.
class Comparator final : public rocksdb::Comparator {
 public:
  const char* Name() const override { return "backfill.MvccKeyComparator.v1"; }
  int Compare(const rocksdb::Slice& a, const rocksdb::Slice& b) const override {
    // Equal sizes: equal user-key sizes, so plain byte order.
    if (a.size() == b.size()) return a.compare(b);
    const size_t a_user = a.size() >= 8 ? a.size() - 8 : a.size();
    const size_t b_user = b.size() >= 8 ? b.size() - 8 : b.size();
    const rocksdb::Slice ua(a.data(), a_user), ub(b.data(), b_user);
    if (int r = ua.compare(ub); r != 0) return r;
    return rocksdb::Slice(a.data() + a_user, a.size() - a_user)
        .compare(rocksdb::Slice(b.data() + b_user, b.size() - b_user));
  }
  void FindShortestSeparator(std::string*,
                             const rocksdb::Slice&) const override {}
  void FindShortSuccessor(std::string*) const override {}
};

struct RawDb {
  std::unique_ptr<Comparator> comparator = std::make_unique<Comparator>();
  rocksdb::DB* db = nullptr;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;  // [meta, data]
  rocksdb::ColumnFamilyHandle* meta() const { return handles[0]; }
  rocksdb::ColumnFamilyHandle* data() const { return handles[1]; }
  ~RawDb() {
    if (db == nullptr) return;
    for (auto* handle : handles) db->DestroyColumnFamilyHandle(handle);
    delete db;
  }
};

inline rocksdb::Status Open(const std::string& path, size_t block_cache_bytes,
                            std::unique_ptr<RawDb>* result) {
  auto raw = std::make_unique<RawDb>();
  rocksdb::DBOptions options;
  rocksdb::ColumnFamilyOptions data;
  data.comparator = raw->comparator.get();
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = rocksdb::NewLRUCache(block_cache_bytes);
  data.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, rocksdb::ColumnFamilyOptions()},
      {"data", data}};
  rocksdb::Status status =
      rocksdb::DB::Open(options, path, families, &raw->handles, &raw->db);
  if (status.ok()) *result = std::move(raw);
  return status;
}

}  // namespace raw_rocksdb_for_test
}  // namespace backfill

#endif  // STORAGE_ROCKSDB_RAW_ROCKSDB_FOR_TEST_H_
