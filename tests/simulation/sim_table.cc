#include "tests/simulation/sim_table.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "serde/memcmp_codec.h"
#include "storage/memory_state_store.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace simulation {

absl::StatusOr<std::unique_ptr<SimTable>> SimTable::Create(
    testing::RandomShape shape) {
  std::unique_ptr<SimTable> table(new SimTable());
  table->shape_ = std::move(shape);
  const TableCatalog& catalog = table->shape_.catalog;
  for (int32_t id : table->shape_.s2_column_ids) {
    auto it = std::find_if(
        catalog.columns.begin(), catalog.columns.end(),
        [id](const ColumnDesc& column) { return column.column_id == id; });
    if (it == catalog.columns.end()) {
      return absl::InvalidArgumentError(absl::StrCat("unknown column id ", id));
    }
    table->s2_to_s1_.push_back(static_cast<int>(it - catalog.columns.begin()));
    table->s2_types_.push_back(it->type);
  }
  for (int s2 : table->shape_.output_indices) {
    table->s3_to_s1_.push_back(table->s2_to_s1_.at(s2));
    table->s3_types_.push_back(table->s2_types_.at(s2));
  }
  table->s3_orders_.assign(table->s3_types_.size(), OrderType::Ascending());
  for (int pk_column : catalog.pk_indices) {
    auto it =
        std::find(table->s3_to_s1_.begin(), table->s3_to_s1_.end(), pk_column);
    if (it == table->s3_to_s1_.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("S3 lacks pk column ", pk_column));
    }
    table->pk_in_s3_.push_back(static_cast<int>(it - table->s3_to_s1_.begin()));
  }
  table->private_store_ = NewMemoryStateStore();
  BACKFILL_ASSIGN_OR_RETURN(
      table->calculator_,
      StateTable::Create(catalog, *table->private_store_,
                         VnodeBitmap::All(catalog.vnode_count)));
  return table;
}

Row SimTable::PkOfS1(RowView s1) const {
  return ProjectRow(s1, shape_.catalog.pk_indices);
}

std::string SimTable::PkBytes(RowView pk) const {
  return calculator_->pk_serde().Serialize(pk);
}

VirtualNode SimTable::VnodeOfPk(RowView pk) const {
  return calculator_->ComputeVnodeByPk(pk);
}

std::string SimTable::EncodeS3(RowView s3) const {
  std::string out;
  EncodeKey(s3, s3_types_, s3_orders_, &out);
  return out;
}

int SimTable::ComparePks(RowView a, RowView b) const {
  return CompareRows(a, b, shape_.catalog.pk_orders);
}

}  // namespace simulation
}  // namespace backfill
