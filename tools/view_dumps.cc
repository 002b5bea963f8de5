#include "tools/view_dumps.h"

#include "third_party/absl_extras/status_macros.h"
#include "tools/copy_format.h"

namespace backfill {
namespace {

// The verification pass's rows, each side into its own dump.
class DumpSink final : public VerifiedRowSink {
 public:
  DumpSink(const std::string& dir, const ScenarioSpec& spec)
      : upstream_(dir + "/upstream.tsv", spec.output_column_names,
                  spec.output_column_types),
        view_(dir + "/view.tsv", spec.output_column_names,
              spec.output_column_types) {}
  absl::Status AddUpstreamRow(RowView row) override {
    return upstream_.AddRow(row);
  }
  absl::Status AddViewRow(RowView row) override { return view_.AddRow(row); }
  absl::Status Finish() {
    BACKFILL_RETURN_IF_ERROR(upstream_.Finish());
    return view_.Finish();
  }

 private:
  CopyDump upstream_;
  CopyDump view_;
};

}  // namespace

absl::StatusOr<ViewVerdict> WriteViewDumps(StateStore& store,
                                           const StreamingJobOptions& job,
                                           const ScenarioSpec& spec,
                                           const std::string& dir) {
  DumpSink dumps(dir, spec);
  BACKFILL_ASSIGN_OR_RETURN(ViewVerdict verdict,
                            VerifyView(store, job, &dumps));
  BACKFILL_RETURN_IF_ERROR(dumps.Finish());
  return verdict;
}

}  // namespace backfill
