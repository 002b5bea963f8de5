#include "executor/barrier.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace backfill {
namespace {

template <typename... Ts>
struct Overloaded : Ts... {
  using Ts::operator()...;
};
template <typename... Ts>
Overloaded(Ts...) -> Overloaded<Ts...>;

template <typename Set>
std::string SetString(const Set& set) {
  return absl::StrCat("[", absl::StrJoin(set, ", "), "]");
}

// ", dispatchers={1: +[3] -[2]}, merges={4: +[3] -[2]}", or "" when the
// Update reschedules nothing.
std::string RescheduleString(const UpdateMutation& m) {
  std::string out;
  if (!m.dispatchers.empty()) {
    absl::StrAppend(
        &out, ", dispatchers={",
        absl::StrJoin(m.dispatchers, ", ",
                      [](std::string* s, const auto& entry) {
                        absl::StrAppend(
                            s, entry.first, ": +",
                            SetString(entry.second.added_downstream_actors),
                            " -",
                            SetString(entry.second.removed_downstream_actors));
                      }),
        "}");
  }
  if (!m.merges.empty()) {
    absl::StrAppend(
        &out, ", merges={",
        absl::StrJoin(m.merges, ", ",
                      [](std::string* s, const auto& entry) {
                        absl::StrAppend(
                            s, entry.first, ": +",
                            SetString(entry.second.added_upstream_actors), " -",
                            SetString(entry.second.removed_upstream_actors));
                      }),
        "}");
  }
  return out;
}

}  // namespace

std::string MutationDebugString(const Mutation& mutation) {
  return std::visit(
      Overloaded{
          [](const AddMutation& m) {
            return absl::StrCat("Add{pause=", m.pause ? "true" : "false",
                                ", backfill_fragments_to_pause=",
                                SetString(m.backfill_fragments_to_pause),
                                ", added_actors=", SetString(m.added_actors),
                                "}");
          },
          [](const UpdateMutation& m) {
            return absl::StrCat(
                "Update{dropped_actors=", SetString(m.dropped_actors),
                ", vnode_assignments={",
                absl::StrJoin(m.vnode_assignments, ", ",
                              [](std::string* out, const auto& entry) {
                                absl::StrAppend(out, entry.first, ": ",
                                                SetString(entry.second));
                              }),
                "}", RescheduleString(m), "}");
          },
          [](const PauseMutation&) { return std::string("Pause"); },
          [](const ResumeMutation&) { return std::string("Resume"); },
          [](const ThrottleMutation& m) {
            return absl::StrCat(
                "Throttle{",
                absl::StrJoin(m.rate_limits, ", ",
                              [](std::string* out, const auto& entry) {
                                absl::StrAppend(out, entry.first, ": ");
                                if (entry.second.has_value()) {
                                  absl::StrAppend(out, *entry.second);
                                } else {
                                  out->append("disabled");
                                }
                              }),
                "}");
          },
          [](const StartFragmentBackfillMutation& m) {
            return absl::StrCat("StartFragmentBackfill{",
                                SetString(m.fragment_ids), "}");
          },
          [](const StopMutation& m) {
            return absl::StrCat("Stop{", SetString(m.actors), "}");
          },
      },
      mutation);
}

bool Barrier::IsStopFor(ActorId actor) const {
  if (const UpdateMutation* update = MutationAs<UpdateMutation>()) {
    return update->dropped_actors.count(actor) > 0;
  }
  const StopMutation* stop = MutationAs<StopMutation>();
  return stop != nullptr && stop->actors.count(actor) > 0;
}

const char* BarrierKindName(BarrierKind kind) {
  switch (kind) {
    case BarrierKind::kInitial:
      return "initial";
    case BarrierKind::kBarrier:
      return "barrier";
    case BarrierKind::kCheckpoint:
      return "checkpoint";
  }
  return "?";
}

std::string Barrier::DebugString() const {
  std::string out = absl::StrCat("Barrier{epoch ", epoch.DebugString(), ", ",
                                 BarrierKindName(kind));
  if (mutation != nullptr) {
    absl::StrAppend(&out, ", ", MutationDebugString(*mutation));
  }
  if (!passed_actors.empty()) {
    absl::StrAppend(&out, ", passed ", SetString(passed_actors));
  }
  out.append("}");
  return out;
}

}  // namespace backfill
