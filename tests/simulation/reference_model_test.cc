// The oracle's reference vnode function and pk order agree with serde's
// (VnodeHasher, the memcomparable encoding) on random rows of the
// simulation's random tables, of the new_types and nested_key example
// scenarios, and on random values of every key type but DECIMAL.
#include "tests/simulation/reference_model.h"

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "executor/runtime/demo/workload.h"
#include "gtest/gtest.h"
#include "serde/memcmp_codec.h"
#include "serde/random_datum.h"
#include "serde/vnode_hash.h"
#include "tests/simulation/scenario.h"
#include "third_party/absl_extras/status_matchers.h"
#include "tools/scenario.h"

namespace backfill {
namespace simulation {
namespace {

// The pk's memcomparable bytes, as the state tables encode it (LIST and
// STRUCT columns included).
std::string EncodedPk(const Row& pk, const TableCatalog& catalog) {
  absl::StatusOr<KeySerde> serde =
      KeySerde::CreateFromColumnTypes(catalog.PkColumnTypes(), catalog.pk_orders);
  EXPECT_TRUE(serde.ok()) << serde.status();
  return serde.ok() ? serde->Serialize(pk) : std::string();
}

TEST(ReferenceModelTest, AgreesWithSerdeOnRandomRows) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    const Scenario scenario = MakeScenario(seed);
    const TableCatalog& catalog = scenario.job.upstream;
    for (const ColumnDesc& column : catalog.columns) {
      ASSERT_TRUE(ReferenceTypeSupported(static_cast<DataType>(column.type)));
    }
    absl::StatusOr<VnodeHasher> hasher =
        VnodeHasher::Create(catalog.dist_key_indices, catalog.vnode_count);
    ASSERT_TRUE(hasher.ok()) << hasher.status();
    std::mt19937_64 rng(seed);
    std::vector<Row> pks;
    for (int i = 0; i < 40; ++i) {
      const Row row = WorkloadRow(catalog, rng(), rng() % 1000, rng() % 5,
                                  (i % 3) * 0.3);
      ASSERT_EQ(ReferenceVnode(row, catalog), hasher->VnodeOf(row))
          << RowDebugString(row);
      pks.push_back(ReferencePk(row, catalog));
    }
    for (const Row& a : pks) {
      for (const Row& b : pks) {
        const int reference = ReferenceComparePk(a, b, catalog.pk_orders);
        const int encoded = EncodedPk(a, catalog).compare(EncodedPk(b, catalog));
        ASSERT_EQ(reference < 0, encoded < 0)
            << RowDebugString(a) << " vs " << RowDebugString(b);
        ASSERT_EQ(reference == 0, encoded == 0)
            << RowDebugString(a) << " vs " << RowDebugString(b);
      }
    }
  }
}

// The reference agrees with serde on the workload's rows of an example
// scenario's table.
void CheckAgreesOnScenario(const std::string& path) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(tools::Scenario proto, LoadScenarioFile(path));
  BACKFILL_ASSERT_OK_AND_ASSIGN(ScenarioSpec spec, ScenarioSpecFromProto(proto));
  const TableCatalog& catalog = spec.job.upstream;
  for (const ColumnDesc& column : catalog.columns) {
    ASSERT_TRUE(ReferenceTypeSupported(column.type))
        << column.type.DebugString();
  }
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      VnodeHasher hasher,
      VnodeHasher::Create(catalog.dist_key_indices, catalog.vnode_count));
  for (uint64_t seed = 1; seed <= 20; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937_64 rng(seed);
    std::vector<Row> pks;
    for (int i = 0; i < 60; ++i) {
      const Row row = WorkloadRow(catalog, seed, rng() % 100000, rng() % 5,
                                  (i % 3) * 0.3);
      ASSERT_EQ(ReferenceVnode(row, catalog), hasher.VnodeOf(row))
          << RowDebugString(row);
      ASSERT_TRUE(ReferenceRowsIdentical(row, row));
      pks.push_back(ReferencePk(row, catalog));
    }
    for (const Row& a : pks) {
      for (const Row& b : pks) {
        const int reference = ReferenceComparePk(a, b, catalog.pk_orders);
        const int encoded =
            EncodedPk(a, catalog).compare(EncodedPk(b, catalog));
        ASSERT_EQ(reference < 0, encoded < 0)
            << RowDebugString(a) << " vs " << RowDebugString(b);
        ASSERT_EQ(reference == 0, encoded == 0)
            << RowDebugString(a) << " vs " << RowDebugString(b);
      }
    }
  }
}

// Issue 21's table (tools/scenarios/new_types.textproto: pk TIMESTAMPTZ ASC,
// INTERVAL DESC NULLS LAST, both in the distribution key): the workload's
// INTERVALs come in varied forms.
TEST(ReferenceModelTest, AgreesWithSerdeOnTheNewTypesScenario) {
  CheckAgreesOnScenario("tools/scenarios/new_types.textproto");
}

// tools/scenarios/nested_key.textproto: pk (LIST<FLOAT64> ASC NULLS FIRST,
// STRUCT DESC), both in the distribution key; the workload's lists hold
// NULL, NaN and -0.0 elements, are empty or prefix others.
TEST(ReferenceModelTest, AgreesWithSerdeOnTheNestedKeyScenario) {
  CheckAgreesOnScenario("tools/scenarios/nested_key.textproto");
}

int Sign(int c) { return c < 0 ? -1 : (c > 0 ? 1 : 0); }

// The reference order and hash of every key type serde encodes, LIST and
// STRUCT included (the order of serde's EncodeKeyDatum bytes, the vnode of
// VnodeHasher), on random values (nested NULLs, -0.0 and NaN inside lists,
// empty lists, lists that prefix others, intervals of one span in different
// fields) under the four orders. DECIMAL is left out (no reference).
TEST(ReferenceModelTest, AgreesWithSerdeOnRandomKeyTypes) {
  int checked_types = 0;
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    SCOPED_TRACE(absl::StrCat("seed ", seed));
    std::mt19937_64 rng(seed);
    const ColumnType type = RandomColumnType(rng, /*max_depth=*/2);
    if (!ReferenceTypeSupported(type)) continue;
    ++checked_types;
    SCOPED_TRACE(type.DebugString());
    std::vector<Datum> values;
    for (int i = 0; i < 24; ++i) values.push_back(RandomColumnDatum(type, rng));
    TableCatalog catalog;
    catalog.columns = {{"k", type, 1, true}};
    catalog.pk_indices = {0};
    catalog.dist_key_indices = {0};
    catalog.vnode_count = 1 + static_cast<int>(rng() % 300);
    BACKFILL_ASSERT_OK_AND_ASSIGN(VnodeHasher hasher,
                                  VnodeHasher::Create({0}, catalog.vnode_count));
    for (const Datum& value : values) {
      ASSERT_EQ(ReferenceVnode(Row{value}, catalog), hasher.VnodeOf(Row{value}))
          << DatumDebugString(value);
    }
    for (const OrderType order : kAllOrderTypes) {
      std::vector<std::string> keys;
      for (const Datum& value : values) {
        std::string key;
        EncodeKeyDatum(value, type, order, &key);
        keys.push_back(std::move(key));
      }
      for (size_t i = 0; i < values.size(); ++i) {
        for (size_t j = 0; j < values.size(); ++j) {
          ASSERT_EQ(Sign(ReferenceComparePk({values[i]}, {values[j]}, {order})),
                    Sign(keys[i].compare(keys[j])))
              << order.DebugString() << ": " << DatumDebugString(values[i])
              << " vs " << DatumDebugString(values[j]);
        }
      }
    }
  }
  EXPECT_GT(checked_types, 200);
}

// The cases the random values may miss, spelled out.
TEST(ReferenceModelTest, NestedAndSpecialValuesInOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  auto list = [](std::vector<Datum> elements) {
    return Datum(ListValue{std::move(elements)});
  };
  const std::vector<OrderType> asc = {OrderType::Ascending()};
  const std::vector<OrderType> desc = {OrderType::Descending()};
  auto cmp = [](const Datum& a, const Datum& b,
                const std::vector<OrderType>& orders) {
    return ReferenceComparePk({a}, {b}, orders);
  };
  // -0.0 == 0.0 and NaN == NaN inside lists; NaN above +Infinity.
  EXPECT_EQ(cmp(list({-0.0}), list({0.0}), asc), 0);
  EXPECT_EQ(cmp(list({nan}), list({nan}), asc), 0);
  EXPECT_GT(cmp(list({nan}), list({inf}), asc), 0);
  // The empty list and prefixes first; a NULL element above every value,
  // under DESC too (reversed with everything else).
  EXPECT_LT(cmp(list({}), list({Datum()}), asc), 0);
  EXPECT_LT(cmp(list({1.0}), list({1.0, 2.0}), asc), 0);
  EXPECT_GT(cmp(list({Datum()}), list({inf}), asc), 0);
  EXPECT_LT(cmp(list({Datum()}), list({inf}), desc), 0);
  // The column's own NULL follows its NULLS order, whatever the elements.
  EXPECT_GT(cmp(Datum(), list({Datum()}), asc), 0);
  EXPECT_LT(cmp(Datum(), list({Datum()}), {OrderType::AscendingNullsFirst()}),
            0);
  // INTERVALs by span: '1 mon' == '30 days' == '720:00:00' < '30 days 1 us'.
  const Interval month{1, 0, 0}, days{0, 30, 0},
      hours{0, 0, int64_t{720} * 3'600'000'000};
  EXPECT_EQ(cmp(month, days, asc), 0);
  EXPECT_EQ(cmp(days, hours, asc), 0);
  EXPECT_LT(cmp(month, Interval{0, 30, 1}, asc), 0);
  EXPECT_FALSE(ReferenceDatumsIdentical(month, days));
  EXPECT_FALSE(ReferenceDatumsIdentical(list({-0.0}), list({0.0})));
  EXPECT_TRUE(ReferenceDatumsIdentical(list({nan, Datum()}), list({nan, Datum()})));
  // INT256: signed.
  EXPECT_LT(cmp(Int256::FromInt64(-1), Int256::FromInt64(0), asc), 0);
  EXPECT_LT(cmp(Int256::Min(), Int256::Max(), asc), 0);
  // STRUCTs field by field, NULL fields above.
  EXPECT_LT(cmp(StructValue{{int64_t{1}, Datum()}},
                StructValue{{int64_t{2}, int64_t{0}}}, asc),
            0);
  EXPECT_GT(cmp(StructValue{{int64_t{1}, Datum()}},
                StructValue{{int64_t{1}, int64_t{9}}}, asc),
            0);
}

}  // namespace
}  // namespace simulation
}  // namespace backfill
