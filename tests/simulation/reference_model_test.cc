// The oracle's reference vnode function and pk order agree with serde's
// (VnodeHasher, the memcomparable encoding) on random rows of the
// simulation's random tables.
#include "tests/simulation/reference_model.h"

#include <cstdint>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "executor/runtime/demo/workload.h"
#include "gtest/gtest.h"
#include "serde/memcmp_codec.h"
#include "serde/vnode_hash.h"
#include "tests/simulation/scenario.h"

namespace backfill {
namespace simulation {
namespace {

std::string EncodedPk(const Row& pk, const TableCatalog& catalog) {
  std::string out;
  EncodeKey(pk, catalog.PkTypes(), catalog.pk_orders, &out);
  return out;
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

}  // namespace
}  // namespace simulation
}  // namespace backfill
