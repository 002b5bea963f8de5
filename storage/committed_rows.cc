#include "storage/committed_rows.h"

#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "serde/memcmp_codec.h"
#include "serde/value_codec.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {

std::string DescribeStoredRow(const TableCatalog& catalog, VirtualNode vnode,
                              absl::string_view pk) {
  return absl::StrCat("table ", catalog.table_id, " (", catalog.name,
                      ") vnode ", vnode, " pk ", absl::CEscape(pk));
}

absl::StatusOr<CommittedRowDecoder> CommittedRowDecoder::Create(
    const TableCatalog& catalog) {
  BACKFILL_RETURN_IF_ERROR(ValidateTableCatalog(catalog));
  BACKFILL_ASSIGN_OR_RETURN(std::unique_ptr<ValueRowCodec> codec,
                            MakeValueCodec(catalog));
  BACKFILL_ASSIGN_OR_RETURN(
      KeySerde pk_serde,
      KeySerde::CreateFromColumnTypes(catalog.PkColumnTypes(),
                                      catalog.pk_orders));
  return CommittedRowDecoder(catalog, std::move(codec), std::move(pk_serde));
}

CommittedRowDecoder::CommittedRowDecoder(
    TableCatalog catalog, std::shared_ptr<const ValueRowCodec> codec,
    KeySerde pk_serde)
    : catalog_(std::move(catalog)),
      codec_(std::move(codec)),
      pk_serde_(std::move(pk_serde)),
      pk_only_columns_(catalog_.PkOnlyColumns()) {
  // value_indices is ascending and distinct in a valid catalog: as many as
  // the columns means all of them, in order.
  value_is_whole_row_ =
      catalog_.value_indices.size() == catalog_.columns.size();
}

absl::Status CommittedRowDecoder::Decode(VirtualNode vnode,
                                         absl::string_view pk,
                                         absl::string_view value,
                                         Row* out) const {
  if (value_is_whole_row_) {  // The per-row fast path: no copies.
    absl::Status status = codec_->DecodeInto(value, out);
    if (!status.ok()) {
      return absl::DataLossError(absl::StrCat(
          DescribeStoredRow(catalog_, vnode, pk), ": corrupt value: ",
          status.message()));
    }
    return absl::OkStatus();
  }
  // The codec's rows have one datum per value column.
  absl::StatusOr<Row> values = codec_->Decode(value);
  if (!values.ok()) {
    return absl::DataLossError(
        absl::StrCat(DescribeStoredRow(catalog_, vnode, pk),
                     ": corrupt value: ", values.status().message()));
  }
  out->assign(catalog_.columns.size(), Datum());
  for (size_t i = 0; i < catalog_.value_indices.size(); ++i) {
    (*out)[catalog_.value_indices[i]] = std::move((*values)[i]);
  }
  if (!pk_only_columns_.empty()) {
    absl::StatusOr<Row> key = pk_serde_.Deserialize(pk);
    if (!key.ok()) {
      return absl::DataLossError(
          absl::StrCat(DescribeStoredRow(catalog_, vnode, pk),
                       ": corrupt key: ", key.status().message()));
    }
    for (const auto& [position, column] : pk_only_columns_) {
      (*out)[column] = std::move((*key)[position]);
    }
  }
  return absl::OkStatus();
}

namespace {

// Vnode after vnode, each through StateStore::NewIterator at the read epoch.
class StoreCommittedRowIterator final : public CommittedRowIterator {
 public:
  StoreCommittedRowIterator(StateStore& store, CommittedRowDecoder decoder,
                            Epoch read_epoch)
      : store_(store), decoder_(std::move(decoder)), read_epoch_(read_epoch) {}

  bool Valid() const override { return valid_; }
  void SeekToFirst() override {
    vnode_ = 0;
    inner_.reset();
    valid_ = false;
    if (!status_.ok()) return;
    OpenVnode();
    Settle();
  }
  void Next() override {
    inner_->Next();
    Settle();
  }
  VirtualNode vnode() const override { return vnode_; }
  absl::string_view pk() const override { return inner_->key(); }
  const Row& row() const override { return row_; }
  absl::Status status() const override { return status_; }

 private:
  void OpenVnode() {
    absl::StatusOr<std::unique_ptr<StateStoreIterator>> it =
        store_.NewIterator(decoder_.catalog().table_id, vnode_, PkRange::All(),
                           read_epoch_, ScanOptions{.fill_cache = false});
    if (!it.ok()) {
      status_ = WithContext(it.status());
      return;
    }
    inner_ = *std::move(it);
    inner_->SeekToFirst();
  }

  // A store error, naming the table and the vnode read.
  absl::Status WithContext(const absl::Status& status) const {
    if (status.ok()) return status;
    const TableCatalog& catalog = decoder_.catalog();
    return absl::Status(
        status.code(), absl::StrCat("table ", catalog.table_id, " (",
                                    catalog.name, ") vnode ", vnode_, ": ",
                                    status.message()));
  }

  // Moves to the next vnode while the current one is exhausted, then
  // decodes the row under the iterator.
  void Settle() {
    valid_ = false;
    while (status_.ok() && inner_ != nullptr && !inner_->Valid()) {
      status_ = WithContext(inner_->status());
      if (!status_.ok()) return;
      if (vnode_ + 1 >= decoder_.catalog().vnode_count) {
        inner_.reset();
        return;
      }
      ++vnode_;
      OpenVnode();
    }
    if (!status_.ok() || inner_ == nullptr) return;
    status_ = decoder_.Decode(vnode_, inner_->key(), inner_->value(), &row_);
    valid_ = status_.ok();
  }

  StateStore& store_;
  const CommittedRowDecoder decoder_;
  const Epoch read_epoch_;
  VirtualNode vnode_ = 0;
  std::unique_ptr<StateStoreIterator> inner_;
  Row row_;
  bool valid_ = false;
  absl::Status status_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<CommittedRowIterator>>
NewStoreCommittedRowIterator(StateStore& store, const TableCatalog& catalog,
                             Epoch read_epoch) {
  BACKFILL_ASSIGN_OR_RETURN(CommittedRowDecoder decoder,
                            CommittedRowDecoder::Create(catalog));
  return std::unique_ptr<CommittedRowIterator>(
      new StoreCommittedRowIterator(store, std::move(decoder), read_epoch));
}

}  // namespace backfill
