// Seeded random table shapes and rows for backfill property tests and the
// simulation: column types, composite pks mixing ASC/DESC and NULLS
// FIRST/LAST (NULLs allowed in the pk), distribution keys that differ from
// the pk, singleton tables, both value encodings, S2 column subsets in any
// order. testonly.
//
//   std::mt19937_64 rng(seed);
//   RandomShape shape = MakeRandomShape(rng, /*table_id=*/7);
//   Row row = RandomTableRow(shape.catalog, rng, /*key_space=*/100);
#ifndef EXECUTOR_TESTING_RANDOM_TABLE_H_
#define EXECUTOR_TESTING_RANDOM_TABLE_H_

#include <cstdint>
#include <random>
#include <vector>

#include "serde/row.h"
#include "storage/table_catalog.h"

namespace backfill {
namespace testing {

struct RandomShape {
  TableCatalog catalog;
  // S2: every pk column plus a random subset of the others, shuffled.
  std::vector<int32_t> s2_column_ids;
  // S3 over S2: a permutation of S2 (every column kept, so rows are
  // identifiable) unless `allow_pruning`, then possibly fewer columns.
  std::vector<int> output_indices;
};

struct RandomShapeOptions {
  // Vnode counts to choose from.
  std::vector<int> vnode_counts = {1, 4, 16, 256};
  // Probability of an empty distribution key (a singleton table).
  double singleton_probability = 0.1;
  // Whether S3 may drop columns (pk columns included).
  bool allow_pruning = false;
  // Probability that a non-pk column has a type that is not one of
  // kAllDataTypes: any value column type (RandomValueColumnType, nesting
  // depth <= 2: JSONB, MAP, LIST, STRUCT and the newer scalars). At 0 no
  // extra random numbers are drawn, so earlier seeds keep their shapes.
  double value_type_probability = 0;
};

RandomShape MakeRandomShape(std::mt19937_64& rng, TableId table_id,
                            const RandomShapeOptions& options = {});

// A row of `catalog`: pk columns drawn from `key_space` distinct values per
// column (NULL with probability `null_fraction`), other columns any value
// of their type (nested ones with their elements and fields).
Row RandomTableRow(const TableCatalog& catalog, std::mt19937_64& rng,
                   uint64_t key_space, double null_fraction = 0.05);

// `row` with new values in its non-pk columns (same pk).
Row RandomValueChange(const TableCatalog& catalog, const Row& row,
                      std::mt19937_64& rng);

}  // namespace testing
}  // namespace backfill

#endif  // EXECUTOR_TESTING_RANDOM_TABLE_H_
