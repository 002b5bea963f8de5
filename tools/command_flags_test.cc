#include "tools/command_flags.h"

#include <cstdint>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

ABSL_FLAG(std::string, test_name, "anonymous", "the name to greet");
ABSL_FLAG(bool, test_loud, false, "shout the greeting");
ABSL_FLAG(uint32_t, test_count, 3, "how many times");
ABSL_FLAG(std::optional<uint64_t>, test_limit, std::nullopt,
          "a limit;\nunset: none");
ABSL_FLAG(double, test_ratio, 0.5, "a ratio");

namespace backfill {
namespace {

using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

CommandFlagsConfig Config() {
  CommandFlagsConfig config;
  config.program = "greeter";
  config.usage = "greeter [flags]: greets.";
  config.help_files = {"tools/command_flags_test.cc"};
  return config;
}

absl::StatusOr<CommandLine> Parse(std::vector<std::string> args,
                                  std::string* help = nullptr) {
  args.insert(args.begin(), "greeter");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  std::ostringstream out;
  absl::StatusOr<CommandLine> line = ParseCommandFlags(
      static_cast<int>(argv.size()), argv.data(), Config(), out);
  if (help != nullptr) *help = out.str();
  return line;
}

class CommandFlagsTest : public ::testing::Test {
 private:
  absl::FlagSaver saver_;  // Every test starts from the defaults.
};

TEST_F(CommandFlagsTest, ParsesEveryForm) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      CommandLine line,
      Parse({"--test_name=ada", "-test_count", "7", "--test_loud", "inspect",
             "--test_limit=10", "--", "--test_ratio=2"}));
  EXPECT_FALSE(line.help_shown);
  EXPECT_EQ(absl::GetFlag(FLAGS_test_name), "ada");
  EXPECT_EQ(absl::GetFlag(FLAGS_test_count), 7u);
  EXPECT_TRUE(absl::GetFlag(FLAGS_test_loud));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_limit), std::optional<uint64_t>(10));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_ratio), 0.5);  // After "--": positional.
  EXPECT_THAT(line.positional, ElementsAre("inspect", "--test_ratio=2"));

  BACKFILL_ASSERT_OK(Parse({"--notest_loud", "--test_limit="}).status());
  EXPECT_FALSE(absl::GetFlag(FLAGS_test_loud));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_limit), std::nullopt);
  BACKFILL_ASSERT_OK(
      Parse({"--test_loud=true", "--test_count=1", "--test_count=2"}).status());
  EXPECT_TRUE(absl::GetFlag(FLAGS_test_loud));
  EXPECT_EQ(absl::GetFlag(FLAGS_test_count), 2u);  // The last one wins.
}

TEST_F(CommandFlagsTest, BadValuesNameTheFlagAndTheAcceptedValues) {
  EXPECT_THAT(
      Parse({"--test_count=abc"}).status(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "--test_count=abc: expected an integer in [0, 4294967295]"));
  EXPECT_THAT(Parse({"--test_count=-1"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--test_count=-1: expected an integer")));
  EXPECT_THAT(Parse({"--test_loud=maybe"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--test_loud=maybe: expected true or false"));
  EXPECT_THAT(Parse({"--test_limit=x"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("or empty for unset")));
  EXPECT_THAT(Parse({"--test_ratio=fast"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--test_ratio=fast: expected a number"));
  EXPECT_THAT(Parse({"--test_count"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--test_count needs a value")));
  EXPECT_THAT(Parse({"--no_such_flag=1"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown flag --no_such_flag")));
  EXPECT_THAT(Parse({"--notest_count"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown flag --notest_count")));
  EXPECT_THAT(Parse({"--notest_loud=1"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("takes no value")));
  // One line each: the caller prints it as is.
  EXPECT_THAT(Parse({"--test_limit=x"}).status().message(),
              Not(HasSubstr("\n")));
}

TEST_F(CommandFlagsTest, TheToolNamesNarrowerAcceptedValues) {
  CommandFlagsConfig config = Config();
  config.accepted_values["test_count"] = "an integer in [1, 10]";
  config.accepted_values["test_limit"] = "a positive integer";
  std::vector<std::string> args = {"greeter", "--test_count=x"};
  std::vector<char*> argv = {args[0].data(), args[1].data()};
  std::ostringstream out;
  EXPECT_THAT(ParseCommandFlags(2, argv.data(), config, out).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "--test_count=x: expected an integer in [1, 10]"));
  const absl::CommandLineFlag* limit = absl::FindCommandLineFlag("test_limit");
  ASSERT_NE(limit, nullptr);
  EXPECT_EQ(AcceptedValues(*limit, config),
            "a positive integer, or empty for unset");
  EXPECT_THAT(CommandFlagsHelp(config, false),
              HasSubstr("  --test_count (uint32; default: 3)\n"
                        "      how many times\n"
                        "      (accepts: an integer in [1, 10])\n"));
}

TEST_F(CommandFlagsTest, AbseilsParserFlagsAreNotSupported) {
  EXPECT_THAT(Parse({"--flagfile=/tmp/flags"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown flag --flagfile")));
  EXPECT_THAT(Parse({"--undefok=x"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(CommandFlagsHelp(Config(), true), Not(HasSubstr("--flagfile")));
}

TEST_F(CommandFlagsTest, HelpListsOurFlagsWithDefaultsAndMeaning) {
  std::string help;
  BACKFILL_ASSERT_OK_AND_ASSIGN(CommandLine line, Parse({"--help"}, &help));
  EXPECT_TRUE(line.help_shown);
  EXPECT_THAT(help, HasSubstr("greeter [flags]: greets.\n"));
  EXPECT_THAT(help, HasSubstr("  --test_name (string; default: \"anonymous\")\n"
                              "      the name to greet\n"));
  EXPECT_THAT(help, HasSubstr("  --test_count (uint32; default: 3)\n"));
  EXPECT_THAT(help, HasSubstr("  --test_loud (bool; default: false)\n"));
  EXPECT_THAT(help,
              HasSubstr("  --test_limit (uint64, optional; default: unset)\n"
                        "      a limit;\n      unset: none\n"));
  // Only the help files' flags.
  EXPECT_THAT(help, Not(HasSubstr("Flags from ")));
  // --help takes no value.
  EXPECT_THAT(Parse({"--help=1"}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST_F(CommandFlagsTest, HelpfullListsEveryFlagByFile) {
  std::string help;
  BACKFILL_ASSERT_OK_AND_ASSIGN(CommandLine line,
                                Parse({"--test_count=4", "--helpfull"}, &help));
  EXPECT_TRUE(line.help_shown);
  // Every linked flag, grouped by file.
  EXPECT_THAT(help, AllOf(HasSubstr("--test_name"), HasSubstr("Flags from "),
                          HasSubstr("tools/command_flags_test.cc")));
}

TEST_F(CommandFlagsTest, NoHelpWithoutAskingForIt) {
  std::string help;
  BACKFILL_ASSERT_OK_AND_ASSIGN(CommandLine line, Parse({}, &help));
  EXPECT_FALSE(line.help_shown);
  EXPECT_THAT(help, IsEmpty());
  EXPECT_THAT(line.positional, IsEmpty());
}

}  // namespace
}  // namespace backfill
