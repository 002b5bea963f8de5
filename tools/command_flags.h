// ParseCommandFlags: the command line of a tool whose flags are abseil flags
// (ABSL_FLAG), parsed through abseil's public reflection API so that the tool,
// not abseil, decides what help and errors look like:
// - `--help` lists the flags of the tool's own files (`help_files`, not only
//   the file holding main, which is all abseil's default usage shows) with
//   type, default and meaning; `--helpfull` lists every flag linked in. Both
//   write to `help_out` and the caller exits 0 (abseil's usage exits 1).
// - A bad value or an unknown flag is one InvalidArgument status whose
//   message names the flag and the accepted values, e.g.
//   `--parallelism=abc: expected an integer in [0, 4294967295] (...)`; abseil
//   would print several lines and exit 1 itself.
//
//   ABSL_FLAG(std::optional<uint32_t>, parallelism, std::nullopt, "actors");
//   absl::StatusOr<CommandLine> line = ParseCommandFlags(argc, argv, config,
//   std::cout); if (!line.ok()) { print line.status() on one line; return 2; }
//   if (line->help_shown) return 0;
//   uint32_t p = absl::GetFlag(FLAGS_parallelism).value_or(2);
//
// abseil's own command-line flags (--flagfile, --fromenv, --tryfromenv,
// --undefok) are not supported: they are unknown flags here.
// Syntax: `--name=value`, `--name value` (not for booleans), `--flag` and
// `--noflag` for booleans, `-name` like `--name`, `--` ends the flags; every
// other argument is positional. A flag given twice keeps the last value.
// Thread-safety: call once, from main, before other threads run (it sets
// global flags).
#ifndef TOOLS_COMMAND_FLAGS_H_
#define TOOLS_COMMAND_FLAGS_H_

#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace backfill {

struct CommandFlagsConfig {
  // The program's name in the help text ("backfill").
  std::string program;
  // The help text's first paragraph: the synopsis and what the tool does.
  std::string usage;
  // `--help` lists the flags defined in files whose path ends with one of
  // these (e.g. "tools/backfill_main.cc"); `--helpfull` lists every flag.
  std::vector<std::string> help_files;
  // For flags whose tool accepts less than their type does: the accepted
  // values to name in errors and in the help (by flag name), e.g.
  // {"parallelism", "an integer in [1, 32768]"}. The tool checks the range
  // itself after parsing, with the same text.
  std::map<std::string, std::string> accepted_values;
};

struct CommandLine {
  // True if --help or --helpfull was given: the help was written and the
  // caller should exit 0 without doing anything else.
  bool help_shown = false;
  // The arguments that are not flags, in order (argv[0] excluded).
  std::vector<std::string> positional;
};

// Parses argv[1..argc) into the abseil flags (see the file comment); writes
// the help to `help_out` when asked for. Errors: InvalidArgument, one line:
// an unknown flag (`unknown flag --name`), a missing value, or a value the
// flag's type does not accept (naming the flag, the value and the accepted
// values). On error no flag is left half-parsed, but flags before the bad
// one keep their new values.
absl::StatusOr<CommandLine> ParseCommandFlags(int argc, char** argv,
                                              const CommandFlagsConfig& config,
                                              std::ostream& help_out);

// What values `flag` accepts: config.accepted_values[name] if there, else
// what its type accepts, e.g. "an integer in [0, 65535]", "true or false",
// "a number", "any text"; optional flags add ", or empty for unset".
std::string AcceptedValues(const absl::CommandLineFlag& flag,
                           const CommandFlagsConfig& config);

// The help text: `config.usage`, then each listed flag, sorted by name:
//   --name (type; default: value)
//       help text
//       (accepts: <accepted_values>)      when the config names them
// `full`: every flag linked in, grouped by file; else the help_files' flags.
std::string CommandFlagsHelp(const CommandFlagsConfig& config, bool full);

}  // namespace backfill

#endif  // TOOLS_COMMAND_FLAGS_H_
