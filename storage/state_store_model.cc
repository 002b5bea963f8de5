// The model-based test of StateStore (state_store_model.h).
#include "storage/state_store_model.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;

using Key = std::pair<VirtualNode, std::string>;
using Batch = std::map<Key, std::optional<std::string>>;
using Rows = std::vector<std::pair<std::string, std::string>>;

struct ModelInstance {
  TableId table_id;
  bool replicated;
  VirtualNode first_vnode;  // Writes go to [first_vnode, first_vnode + 4).
  std::unique_ptr<LocalStateStore> local;
  Batch memtable;
  std::vector<std::pair<Epoch, Batch>> sealed;
};

class Model {
 public:
  // Newest committed version <= epoch.
  std::optional<std::string> CommittedGet(TableId table, const Key& key,
                                          Epoch epoch) const {
    auto it = committed_.find({table, key});
    if (it == committed_.end()) return std::nullopt;
    auto version = it->second.lower_bound(std::min(epoch, committed_epoch_));
    if (version == it->second.end()) return std::nullopt;
    return version->second;
  }
  std::map<std::string, std::string> CommittedRows(TableId table,
                                                   VirtualNode vnode,
                                                   Epoch epoch) const {
    std::map<std::string, std::string> rows;
    for (const auto& [key, versions] : committed_) {
      if (key.first != table || key.second.first != vnode) continue;
      if (auto value = CommittedGet(table, key.second, epoch))
        rows[key.second.second] = *value;
    }
    return rows;
  }
  std::map<std::string, std::string> LocalRows(const ModelInstance& instance,
                                               VirtualNode vnode) const {
    auto rows =
        CommittedRows(instance.table_id, vnode, instance.local->epoch());
    auto apply = [&](const Batch& batch) {
      for (const auto& [key, value] : batch) {
        if (key.first != vnode) continue;
        if (value) {
          rows[key.second] = *value;
        } else {
          rows.erase(key.second);
        }
      }
    };
    for (const auto& [epoch, batch] : instance.sealed) {
      if (epoch > committed_epoch_) apply(batch);
    }
    apply(instance.memtable);
    return rows;
  }
  void Commit(std::vector<ModelInstance>& instances, Epoch epoch) {
    for (auto& instance : instances) {
      std::vector<std::pair<Epoch, Batch>> kept;
      for (auto& [batch_epoch, batch] : instance.sealed) {
        if (batch_epoch > epoch) {
          kept.emplace_back(batch_epoch, std::move(batch));
          continue;
        }
        if (instance.replicated) continue;  // Dropped, never committed.
        for (auto& [key, value] : batch) {
          committed_[{instance.table_id, key}][batch_epoch] = value;
        }
      }
      instance.sealed = std::move(kept);
    }
    committed_epoch_ = epoch;
  }
  Epoch committed_epoch() const { return committed_epoch_; }

 private:
  std::map<std::pair<TableId, Key>,
           std::map<Epoch, std::optional<std::string>, std::greater<>>>
      committed_;
  Epoch committed_epoch_;
};

std::string RandomPk(std::mt19937_64& rng) {
  static const char kAlphabet[] = {'\x00', '\x01', 'a', '\x7f', '\x80', '\xff'};
  std::string pk;
  const int length = static_cast<int>(rng() % 4);
  for (int i = 0; i < length; ++i)
    pk.push_back(kAlphabet[rng() % sizeof(kAlphabet)]);
  return pk;
}

Rows Expected(const std::map<std::string, std::string>& rows,
              const PkRange& range, absl::string_view seek) {
  Rows out;
  for (const auto& [pk, value] : rows) {
    if (range.Contains(pk) && pk >= seek) out.emplace_back(pk, value);
  }
  return out;
}

Rows Drain(StateStoreIterator& it, absl::string_view seek) {
  Rows rows;
  for (it.Seek(seek); it.Valid(); it.Next()) {
    rows.emplace_back(std::string(it.key()), std::string(it.value()));
  }
  EXPECT_THAT(it.status(), IsOk());
  return rows;
}

void RunTrace(const StateStoreModelFactory& factory, uint64_t seed) {
  SCOPED_TRACE(absl::StrCat(factory.name, " seed ", seed));
  std::mt19937_64 rng(seed);
  std::unique_ptr<StateStore> store = factory.open();
  ASSERT_NE(store, nullptr);
  Model model;
  Epoch epoch(1);
  // Table 0: two writers on disjoint vnodes and a replica; tables 1, 2: one
  // writer each; a replica of table 1.
  const std::vector<std::tuple<TableId, bool, VirtualNode>> layout = {
      {0, false, 0}, {0, false, 4}, {0, true, 0},
      {1, false, 0}, {1, true, 0},  {2, false, 2}};
  std::vector<ModelInstance> instances;
  auto make_instance = [&](TableId table, bool replicated,
                           VirtualNode first_vnode) {
    ModelInstance instance{table, replicated, first_vnode, nullptr, {}, {}};
    auto local = store->NewLocalStateStore(table, LocalOptions{replicated});
    EXPECT_THAT(local, IsOk());
    instance.local = *std::move(local);
    EXPECT_THAT(instance.local->Init(EpochPair{epoch, model.committed_epoch()}),
                IsOk());
    return instance;
  };
  for (const auto& [table, replicated, vnode] : layout) {
    instances.push_back(make_instance(table, replicated, vnode));
  }

  for (int op = 0; op < factory.num_ops; ++op) {
    if (::testing::Test::HasFatalFailure() || ::testing::Test::HasFailure())
      return;
    const int kind = static_cast<int>(rng() % 100);
    ModelInstance& instance = instances[rng() % instances.size()];
    const VirtualNode vnode =
        static_cast<VirtualNode>(instance.first_vnode + rng() % 4);
    if (kind < 45) {  // Write.
      const std::string pk = RandomPk(rng);
      if (rng() % 4 == 0) {
        ASSERT_THAT(instance.local->Delete(vnode, pk), IsOk());
        instance.memtable[{vnode, pk}] = std::nullopt;
      } else {
        const std::string value = absl::StrCat("v", op);
        ASSERT_THAT(instance.local->Insert(vnode, pk, value), IsOk());
        instance.memtable[{vnode, pk}] = value;
      }
    } else if (kind < 52) {  // Barrier for everyone; maybe a checkpoint.
      const EpochPair next{Epoch(epoch.value() + 1 + rng() % 2), epoch};
      for (auto& each : instances) {
        ASSERT_THAT(each.local->Seal(next), IsOk());
        if (!each.memtable.empty()) {
          each.sealed.emplace_back(epoch, std::move(each.memtable));
          each.memtable.clear();
        }
      }
      const Epoch sealed = epoch;
      epoch = next.curr;
      if (rng() % 2 == 0) {
        // Any sealed epoch above the committed one.
        ASSERT_THAT(store->Checkpoint(sealed), IsOk());
        model.Commit(instances, sealed);
        ASSERT_EQ(store->CommittedEpoch(0), model.committed_epoch());
      }
    } else if (kind <
               54) {  // An instance crashes: its uncommitted data is gone.
      auto [table, replicated, first_vnode] = std::tuple(
          instance.table_id, instance.replicated, instance.first_vnode);
      instance.local.reset();
      instance = make_instance(table, replicated, first_vnode);
    } else if (kind < 70) {  // Local point read.
      const std::string pk = RandomPk(rng);
      auto expected = model.LocalRows(instance, vnode);
      auto it = expected.find(pk);
      auto got = instance.local->Get(vnode, pk);
      ASSERT_THAT(got, IsOk());
      ASSERT_EQ(*got, it == expected.end()
                          ? std::nullopt
                          : std::optional<std::string>(it->second))
          << "op " << op << " local get pk " << absl::CHexEscape(pk);
    } else if (kind < 85) {  // Local scan with a random range and seek.
      PkRange range = PkRange::From(rng() % 2 ? RandomPk(rng) : "");
      if (rng() % 2) range.exclusive_max = RandomPk(rng);
      const std::string seek = rng() % 3 == 0 ? RandomPk(rng) : "";
      auto it = instance.local->NewIterator(vnode, range);
      ASSERT_THAT(it, IsOk());
      ASSERT_EQ(Drain(**it, seek),
                Expected(model.LocalRows(instance, vnode), range, seek))
          << "op " << op << " local scan " << range.DebugString();
    } else {  // Committed read at a random epoch.
      const Epoch read_epoch(rng() % (epoch.value() + 2));
      const TableId table = static_cast<TableId>(rng() % 3);
      const VirtualNode any_vnode = static_cast<VirtualNode>(rng() % 8);
      auto it =
          store->NewIterator(table, any_vnode, PkRange::All(), read_epoch);
      if (!it.ok() &&
          it.status().code() == absl::StatusCode::kFailedPrecondition &&
          read_epoch < model.committed_epoch()) {
        continue;  // A historical read below the GC horizon: allowed.
      }
      ASSERT_THAT(it, IsOk());
      const std::string seek = rng() % 3 == 0 ? RandomPk(rng) : "";
      ASSERT_EQ(Drain(**it, seek),
                Expected(model.CommittedRows(table, any_vnode, read_epoch),
                         PkRange::All(), seek))
          << "op " << op << " committed scan at " << read_epoch.value();
      const std::string pk = RandomPk(rng);
      auto got = store->Get(TableKey{table, any_vnode, pk}, read_epoch);
      ASSERT_THAT(got, IsOk());
      ASSERT_EQ(*got, model.CommittedGet(table, {any_vnode, pk}, read_epoch));
    }
  }
}

}  // namespace

std::string StateStoreModelFactoryName(
    const ::testing::TestParamInfo<StateStoreModelFactory>& info) {
  return info.param.name;
}

TEST_P(StateStoreModelTest, RandomTracesMatchTheModel) {
  for (int seed = 1; seed <= GetParam().num_seeds; ++seed) {
    RunTrace(GetParam(), static_cast<uint64_t>(seed));
    if (HasFailure()) return;
  }
}

}  // namespace backfill
