// The `--dump_dir` files of //tools:backfill: DIR/upstream.tsv (the table's
// rows projected to the job's output columns) and DIR/view.tsv (the view's
// output columns), in PostgreSQL COPY text (tools/copy_format.h), each a
// header line of column names and then its rows sorted byte-wise, so the
// two files are byte-equal iff the view equals the table. Both are written
// by one verification pass (VerifyView, executor/runtime/verifier.h), in
// constant memory (CopyDump sorts through run files beside the dumps).
//
//   BACKFILL_ASSIGN_OR_RETURN(ViewVerdict verdict,
//                             WriteViewDumps(store, spec.job, spec, dir));
//   if (verdict.consistent != job.consistent) ...  // data changed since
#ifndef TOOLS_VIEW_DUMPS_H_
#define TOOLS_VIEW_DUMPS_H_

#include <string>

#include "absl/status/statusor.h"
#include "executor/runtime/streaming_job_options.h"
#include "executor/runtime/verifier.h"
#include "storage/state_store.h"
#include "tools/scenario_spec.h"

namespace backfill {

// Writes `dir`/upstream.tsv and `dir`/view.tsv for the committed tables of
// `job` in `store` (read as VerifyView reads them: through
// job.committed_rows when set) and returns the pass's verdict. The columns
// are `spec`'s output columns (output_column_names, output_column_types);
// `job` is the job as it ran (spec.job with the caller's readers).
// REQUIRES: `dir` exists (its caller makes it). Errors: VerifyView's;
// CopyDump's (NotFound for a missing `dir`, PermissionDenied,
// ResourceExhausted, Internal), naming the file. Existing files are
// replaced; neither file is ever half-written.
absl::StatusOr<ViewVerdict> WriteViewDumps(StateStore& store,
                                           const StreamingJobOptions& job,
                                           const ScenarioSpec& spec,
                                           const std::string& dir);

}  // namespace backfill

#endif  // TOOLS_VIEW_DUMPS_H_
