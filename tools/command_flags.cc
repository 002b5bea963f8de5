#include "tools/command_flags.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace backfill {
namespace {

template <typename T>
std::string IntegerRange() {
  return absl::StrCat("an integer in [", std::numeric_limits<T>::min(), ", ",
                      std::numeric_limits<T>::max(), "]");
}

// The type's description and whether the flag is a std::optional.
struct TypeInfo {
  std::string accepted;
  std::string name;
  bool optional = false;
  bool boolean = false;
};

template <typename T>
bool IsPlainOrOptional(const absl::CommandLineFlag& flag, bool* optional) {
  if (flag.IsOfType<T>()) {
    *optional = false;
    return true;
  }
  if (flag.IsOfType<std::optional<T>>()) {
    *optional = true;
    return true;
  }
  return false;
}

TypeInfo Describe(const absl::CommandLineFlag& flag) {
  TypeInfo info;
  bool optional = false;
  if (IsPlainOrOptional<bool>(flag, &optional)) {
    info = {"true or false", "bool", optional, !optional};
  } else if (IsPlainOrOptional<int32_t>(flag, &optional)) {
    info = {IntegerRange<int32_t>(), "int32", optional};
  } else if (IsPlainOrOptional<uint32_t>(flag, &optional)) {
    info = {IntegerRange<uint32_t>(), "uint32", optional};
  } else if (IsPlainOrOptional<int64_t>(flag, &optional)) {
    info = {IntegerRange<int64_t>(), "int64", optional};
  } else if (IsPlainOrOptional<uint64_t>(flag, &optional)) {
    info = {IntegerRange<uint64_t>(), "uint64", optional};
  } else if (IsPlainOrOptional<double>(flag, &optional)) {
    info = {"a number", "double", optional};
  } else if (IsPlainOrOptional<std::string>(flag, &optional)) {
    info = {"any text", "string", optional};
  } else {
    info = {"a value of the flag's type", "value", false};
  }
  return info;
}

// abseil's flags for its own parser, which this one does not implement.
bool IsAbseilParserFlag(absl::string_view name) {
  return name == "flagfile" || name == "fromenv" || name == "tryfromenv" ||
         name == "undefok";
}

std::string FlagEntry(const absl::CommandLineFlag& flag,
                      const CommandFlagsConfig& config) {
  const TypeInfo type = Describe(flag);
  std::string default_value = flag.DefaultValue();
  if (type.name == "string")
    default_value = absl::StrCat("\"", default_value, "\"");
  if (type.optional && flag.DefaultValue().empty()) default_value = "unset";
  std::string help = flag.Help();
  absl::StrReplaceAll({{"\n", "\n      "}}, &help);
  std::string entry = absl::StrCat(
      "  --", flag.Name(), " (", type.name, type.optional ? ", optional" : "",
      "; default: ", default_value, ")\n      ", help, "\n");
  if (config.accepted_values.count(std::string(flag.Name())) > 0) {
    absl::StrAppend(&entry, "      (accepts: ", AcceptedValues(flag, config),
                    ")\n");
  }
  return entry;
}

// A flag defined by abseil itself or by a library that is not ours to show
// in --help (listed in --helpfull).
bool InHelpFiles(const absl::CommandLineFlag& flag,
                 const std::vector<std::string>& files) {
  const std::string file = flag.Filename();
  for (const std::string& suffix : files) {
    if (absl::EndsWith(file, suffix)) return true;
  }
  return false;
}

}  // namespace

std::string AcceptedValues(const absl::CommandLineFlag& flag,
                           const CommandFlagsConfig& config) {
  const TypeInfo type = Describe(flag);
  auto it = config.accepted_values.find(std::string(flag.Name()));
  const std::string accepted =
      it != config.accepted_values.end() ? it->second : type.accepted;
  if (type.optional) return absl::StrCat(accepted, ", or empty for unset");
  return accepted;
}

std::string CommandFlagsHelp(const CommandFlagsConfig& config, bool full) {
  std::map<std::string, std::map<std::string, const absl::CommandLineFlag*>>
      by_file;
  for (const auto& [name, flag] : absl::GetAllFlags()) {
    if (flag->IsRetired() || IsAbseilParserFlag(name)) continue;
    if (!full && !InHelpFiles(*flag, config.help_files)) continue;
    by_file[full ? flag->Filename() : ""][std::string(name)] = flag;
  }
  std::string out = config.usage;
  if (!out.empty() && out.back() != '\n') out += '\n';
  out += "\nFlags";
  if (!full) out += " (--helpfull lists every flag, abseil's too)";
  out += ":\n";
  for (const auto& [file, flags] : by_file) {
    if (full) absl::StrAppend(&out, "\n  Flags from ", file, ":\n");
    for (const auto& [name, flag] : flags) out += FlagEntry(*flag, config);
  }
  return out;
}

absl::StatusOr<CommandLine> ParseCommandFlags(int argc, char** argv,
                                              const CommandFlagsConfig& config,
                                              std::ostream& help_out) {
  CommandLine line;
  std::optional<bool> help_full;
  bool flags_ended = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (flags_ended || arg.size() < 2 || arg[0] != '-') {
      line.positional.push_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_ended = true;
      continue;
    }
    const size_t dashes = arg[1] == '-' ? 2 : 1;
    const size_t eq = arg.find('=');
    std::string name = arg.substr(
        dashes, eq == std::string::npos ? std::string::npos : eq - dashes);
    std::optional<std::string> value;
    if (eq != std::string::npos) value = arg.substr(eq + 1);
    if (name == "help" || name == "helpfull" || name == "helpshort") {
      if (value.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " takes no value"));
      }
      help_full = help_full.value_or(false) || name == "helpfull";
      continue;
    }
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    bool negated = false;
    if (flag == nullptr && absl::StartsWith(name, "no")) {
      absl::CommandLineFlag* positive =
          absl::FindCommandLineFlag(name.substr(2));
      if (positive != nullptr && Describe(*positive).boolean) {
        flag = positive;
        negated = true;
        name = name.substr(2);
      }
    }
    if (flag == nullptr || flag->IsRetired() || IsAbseilParserFlag(name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", name, " (", config.program,
                       " --help lists the flags)"));
    }
    const TypeInfo type = Describe(*flag);
    if (negated) {
      if (value.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--no", name, " takes no value"));
      }
      value = "false";
    } else if (!value.has_value()) {
      if (type.boolean) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "--", name, " needs a value: ", AcceptedValues(*flag, config)));
      }
    }
    std::string error;
    if (!flag->ParseFrom(*value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, "=", *value, ": expected ",
                       AcceptedValues(*flag, config)));
    }
  }
  if (help_full.has_value()) {
    help_out << CommandFlagsHelp(config, *help_full);
    help_out.flush();
    line.help_shown = true;
  }
  return line;
}

}  // namespace backfill
