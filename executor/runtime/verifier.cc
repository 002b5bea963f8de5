#include "executor/runtime/verifier.h"

#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "storage/committed_rows.h"
#include "storage/table_catalog.h"
#include "third_party/absl_extras/status_macros.h"

namespace backfill {
namespace {

// OK iff a row has the same vnode and pk bytes in `view` as in `upstream`
// (what the merge relies on). ViewCatalog always gives that.
absl::Status CheckSameStorageOrder(const StreamingJobOptions& options,
                                   const TableCatalog& view) {
  const TableCatalog& upstream = options.upstream;
  const std::vector<int> columns = ViewColumns(options);
  bool same = view.vnode_count == upstream.vnode_count &&
              !upstream.vnode_column.has_value() &&
              !view.vnode_column.has_value() &&
              view.pk_indices.size() == upstream.pk_indices.size() &&
              view.dist_key_indices.size() == upstream.dist_key_indices.size();
  for (size_t i = 0; same && i < view.pk_indices.size(); ++i) {
    same = columns[view.pk_indices[i]] == upstream.pk_indices[i] &&
           view.pk_orders[i] == upstream.pk_orders[i];
  }
  for (size_t i = 0; same && i < view.dist_key_indices.size(); ++i) {
    same = columns[view.dist_key_indices[i]] == upstream.dist_key_indices[i];
  }
  if (same) return absl::OkStatus();
  return absl::InternalError(absl::StrCat(
      "verification: the view ", view.DebugString(),
      " is not stored in the order of the upstream ", upstream.DebugString(),
      ": a streaming merge cannot compare them"));
}

// One table's side of the merge: its reader, the keys it has passed (to
// check that they strictly increase), its row count.
class Side {
 public:
  Side(const char* name, std::unique_ptr<CommittedRowIterator> it)
      : name_(name), it_(std::move(it)) {}

  absl::Status Start() {
    it_->SeekToFirst();
    return Check();
  }
  absl::Status Advance() {
    previous_vnode_ = it_->vnode();
    previous_pk_.assign(it_->pk().data(), it_->pk().size());
    has_previous_ = true;
    ++rows_;
    it_->Next();
    return Check();
  }
  bool Valid() const { return it_->Valid(); }
  CommittedRowIterator& it() { return *it_; }
  uint64_t rows() const { return rows_; }

 private:
  absl::Status Check() const {
    BACKFILL_RETURN_IF_ERROR(it_->status());
    if (!it_->Valid() || !has_previous_) return absl::OkStatus();
    if (it_->vnode() > previous_vnode_ ||
        (it_->vnode() == previous_vnode_ &&
         it_->pk() > absl::string_view(previous_pk_))) {
      return absl::OkStatus();
    }
    return absl::InternalError(
        absl::StrCat("verification: the ", name_, "'s reader went from vnode ",
                     previous_vnode_, " pk ", absl::CEscape(previous_pk_),
                     " to vnode ", it_->vnode(), " pk ",
                     absl::CEscape(it_->pk()), ": not in storage order"));
  }

  const char* const name_;
  const std::unique_ptr<CommittedRowIterator> it_;
  bool has_previous_ = false;
  VirtualNode previous_vnode_ = 0;
  std::string previous_pk_;
  uint64_t rows_ = 0;
};

// <0, 0, >0 as upstream's key is before, equal to, after the view's.
// REQUIRES: both valid.
int CompareKeys(CommittedRowIterator& upstream, CommittedRowIterator& view) {
  if (upstream.vnode() != view.vnode()) {
    return upstream.vnode() < view.vnode() ? -1 : 1;
  }
  return upstream.pk().compare(view.pk());
}

}  // namespace

absl::StatusOr<ViewVerdict> VerifyView(StateStore& store,
                                       const StreamingJobOptions& options,
                                       VerifiedRowSink* sink) {
  const TableCatalog view_catalog = ViewCatalog(options);
  BACKFILL_RETURN_IF_ERROR(CheckSameStorageOrder(options, view_catalog));
  CommittedRowReader reader = options.committed_rows;
  if (!reader) {
    reader = [&store](const TableCatalog& catalog, Epoch read_epoch) {
      return NewStoreCommittedRowIterator(store, catalog, read_epoch);
    };
  }
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<CommittedRowIterator> upstream_it,
      reader(options.upstream,
             store.CommittedEpoch(options.upstream.table_id)));
  BACKFILL_ASSIGN_OR_RETURN(
      std::unique_ptr<CommittedRowIterator> view_it,
      reader(view_catalog, store.CommittedEpoch(view_catalog.table_id)));
  Side upstream("upstream", std::move(upstream_it));
  Side view("view", std::move(view_it));
  BACKFILL_RETURN_IF_ERROR(upstream.Start());
  BACKFILL_RETURN_IF_ERROR(view.Start());

  const std::vector<int> columns = ViewColumns(options);
  const size_t num_output = JobOutputColumns(options).size();
  std::string mismatch;
  Row projected;
  for (uint64_t index = 0; upstream.Valid() || view.Valid(); ++index) {
    const int order = !upstream.Valid() ? 1
                      : !view.Valid()   ? -1
                                        : CompareKeys(upstream.it(), view.it());
    if (order <= 0) {
      projected = ProjectRow(upstream.it().row(), columns);
      if (sink != nullptr) {
        BACKFILL_RETURN_IF_ERROR(
            sink->AddUpstreamRow(RowView(projected).subspan(0, num_output)));
      }
    }
    if (order >= 0 && sink != nullptr) {
      BACKFILL_RETURN_IF_ERROR(
          sink->AddViewRow(RowView(view.it().row()).subspan(0, num_output)));
    }
    if (mismatch.empty()) {
      if (order < 0) {
        mismatch =
            absl::StrCat("row ", index, ": table ", RowDebugString(projected),
                         " is missing from the view");
      } else if (order > 0) {
        mismatch = absl::StrCat("row ", index, ": view ",
                                RowDebugString(view.it().row()),
                                " is not in the table");
      } else if (!RowsEqual(projected, view.it().row())) {
        mismatch =
            absl::StrCat("row ", index, ": table ", RowDebugString(projected),
                         " view ", RowDebugString(view.it().row()));
      }
    }
    if (order <= 0) BACKFILL_RETURN_IF_ERROR(upstream.Advance());
    if (order >= 0) BACKFILL_RETURN_IF_ERROR(view.Advance());
  }
  ViewVerdict verdict;
  verdict.upstream_rows = upstream.rows();
  verdict.view_rows = view.rows();
  verdict.consistent = mismatch.empty();
  if (!verdict.consistent) {
    verdict.mismatch =
        absl::StrCat(mismatch, " (table has ", verdict.upstream_rows,
                     " rows, view has ", verdict.view_rows, ")");
  }
  return verdict;
}

}  // namespace backfill
