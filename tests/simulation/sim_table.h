// SimTable: the table under simulation and its three schemas (CONTRACT §2):
// S1 (the upstream catalog), S2 (the backfill's input columns) and S3 (its
// output, which keeps every pk column so each view row's vnode is known),
// with the projections, pk encodings and the vnode function shared by the
// dispatcher, the view model and the oracle. testonly.
//
//   BACKFILL_ASSIGN_OR_RETURN(auto table, SimTable::Create(shape));
//   std::string pk = table->PkBytesOfS1(row);   // the model's key
//   VirtualNode v = table->VnodeOfS1(row);      // the storage's vnode
#ifndef TESTS_SIMULATION_SIM_TABLE_H_
#define TESTS_SIMULATION_SIM_TABLE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "executor/testing/random_table.h"
#include "serde/row.h"
#include "serde/vnode.h"
#include "storage/state_store.h"
#include "storage/state_table.h"
#include "storage/table_catalog.h"

namespace backfill {
namespace simulation {

class SimTable {
 public:
  // Errors: InvalidArgument for a bad catalog or an S3 without every pk
  // column.
  static absl::StatusOr<std::unique_ptr<SimTable>> Create(
      testing::RandomShape shape);

  const TableCatalog& catalog() const { return shape_.catalog; }
  const std::vector<int32_t>& s2_column_ids() const {
    return shape_.s2_column_ids;
  }
  // S3 as indices into S2.
  const std::vector<int>& output_indices() const {
    return shape_.output_indices;
  }
  const std::vector<DataType>& s2_types() const { return s2_types_; }
  const std::vector<DataType>& s3_types() const { return s3_types_; }

  Row ToS2(RowView s1) const { return ProjectRow(s1, s2_to_s1_); }
  Row S1ToS3(RowView s1) const { return ProjectRow(s1, s3_to_s1_); }
  // The pk (pk columns in pk order) of an S1 / S3 row.
  Row PkOfS1(RowView s1) const;
  Row PkOfS3(RowView s3) const { return ProjectRow(s3, pk_in_s3_); }
  // The memcomparable pk bytes (the storage key and the models' key).
  std::string PkBytes(RowView pk) const;
  VirtualNode VnodeOfPk(RowView pk) const;
  VirtualNode VnodeOfS1(RowView s1) const { return VnodeOfPk(PkOfS1(s1)); }
  // An encoding of a whole S3 row for exact comparison (NaN-safe).
  std::string EncodeS3(RowView s3) const;
  // The pk order comparison: <0, 0, >0.
  int ComparePks(RowView a, RowView b) const;

 private:
  SimTable() = default;

  testing::RandomShape shape_;
  std::vector<int> s2_to_s1_;
  std::vector<int> s3_to_s1_;
  std::vector<int> pk_in_s3_;
  std::vector<DataType> s2_types_;
  std::vector<DataType> s3_types_;
  std::vector<OrderType> s3_orders_;
  // A StateTable over a private in-memory store: the one vnode function.
  std::unique_ptr<StateStore> private_store_;
  std::unique_ptr<StateTable> calculator_;
};

}  // namespace simulation
}  // namespace backfill

#endif  // TESTS_SIMULATION_SIM_TABLE_H_
