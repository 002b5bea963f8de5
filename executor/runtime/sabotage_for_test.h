// PlantOutputSabotage: the output decorator behind RuntimeSabotageForTest's
// chunk defects (streaming_job_options.h): it loses or repeats chunks on
// their way out of an actor, so that the simulation can show that its
// oracle catches a lost or a duplicated change. Test only: BuildJobGraph
// plants it only when the options ask for it.
//
//   output = PlantOutputSabotage(std::move(output), /*drop=*/0, /*dup=*/7);
//
// Thread-safety: as the wrapped output (one thread at a time).
#ifndef EXECUTOR_RUNTIME_SABOTAGE_FOR_TEST_H_
#define EXECUTOR_RUNTIME_SABOTAGE_FOR_TEST_H_

#include <cstdint>
#include <memory>

#include "executor/runtime/actor.h"

namespace backfill {

// `output`, except that every `drop_every_nth_chunk`-th chunk pushed is
// dropped and every `duplicate_every_nth_chunk`-th is delivered twice (0 =
// never; barriers and watermarks pass untouched). Both 0: `output` itself.
std::unique_ptr<ActorOutput> PlantOutputSabotage(
    std::unique_ptr<ActorOutput> output, uint32_t drop_every_nth_chunk,
    uint32_t duplicate_every_nth_chunk);

}  // namespace backfill

#endif  // EXECUTOR_RUNTIME_SABOTAGE_FOR_TEST_H_
