#include "tools/storage_fault_spec.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "third_party/absl_extras/status_matchers.h"

namespace backfill {
namespace {

using ::backfill::testing::IsOk;
using ::backfill::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using Op = FaultInjector::Operation;

TEST(ParseStorageFaultSpecsTest, Defaults) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(std::vector<StorageFaultSpec> specs,
                                ParseStorageFaultSpecs("op=sync"));
  ASSERT_EQ(specs.size(), 1u);
  EXPECT_EQ(specs[0].operation, Op::kSync);
  EXPECT_FALSE(specs[0].no_space);
  EXPECT_EQ(specs[0].file, "");
  EXPECT_EQ(specs[0].after, 0u);
  EXPECT_EQ(specs[0].count, 1u);
  EXPECT_EQ(specs[0].probability, 1.0);
  EXPECT_EQ(specs[0].text, "op=sync");
}

TEST(ParseStorageFaultSpecsTest, EveryKeyAndSeveralSpecs) {
  BACKFILL_ASSERT_OK_AND_ASSIGN(
      std::vector<StorageFaultSpec> specs,
      ParseStorageFaultSpecs(
          "op=read,file=.sst,after=7,count=3 ; "
          "op=full_disk,persistent;op=write,probability=0.25,seed=9"));
  ASSERT_EQ(specs.size(), 3u);
  EXPECT_EQ(specs[0].operation, Op::kRead);
  EXPECT_EQ(specs[0].file, ".sst");
  EXPECT_EQ(specs[0].after, 7u);
  EXPECT_EQ(specs[0].count, 3u);
  EXPECT_EQ(specs[1].operation, Op::kWrite);
  EXPECT_TRUE(specs[1].no_space);
  EXPECT_FALSE(specs[1].count.has_value());
  EXPECT_EQ(specs[2].probability, 0.25);
  EXPECT_EQ(specs[2].seed, 9u);
}

TEST(ParseStorageFaultSpecsTest, ErrorsNameTheKey) {
  EXPECT_THAT(ParseStorageFaultSpecs(""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty")));
  EXPECT_THAT(
      ParseStorageFaultSpecs("after=3"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no op=")));
  EXPECT_THAT(
      ParseStorageFaultSpecs("op=erase"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("op=erase")));
  EXPECT_THAT(
      ParseStorageFaultSpecs("op=write,count=0"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("count=0")));
  EXPECT_THAT(
      ParseStorageFaultSpecs("op=write,after=-1"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("after=-1")));
  EXPECT_THAT(ParseStorageFaultSpecs("op=write,probability=1.5"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("probability=1.5")));
  EXPECT_THAT(ParseStorageFaultSpecs("op=write,colour=red"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown key \"colour\"")));
  EXPECT_THAT(
      ParseStorageFaultSpecs("op=write,count=2,persistent"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("exclude")));
  EXPECT_THAT(ParseStorageFaultSpecs("op=write,sometimes"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"sometimes\" is not key=value")));
}

std::vector<StorageFaultSpec> Parse(const std::string& text) {
  auto specs = ParseStorageFaultSpecs(text);
  EXPECT_THAT(specs.status(), IsOk());
  return specs.ok() ? *specs : std::vector<StorageFaultSpec>{};
}

TEST(SpecFaultInjectorTest, AfterThenCountThenClears) {
  SpecFaultInjector injector(Parse("op=sync,file=.log,after=2,count=2"));
  EXPECT_THAT(injector.Check(Op::kSync, "/d/000004.log"), IsOk());
  EXPECT_THAT(injector.Check(Op::kSync, "/d/MANIFEST-000005"),
              IsOk());  // Not matched.
  EXPECT_THAT(injector.Check(Op::kWrite, "/d/000004.log"),
              IsOk());  // Other op.
  EXPECT_THAT(injector.Check(Op::kSync, "/d/000004.log"), IsOk());
  EXPECT_THAT(
      injector.Check(Op::kSync, "/d/000004.log"),
      StatusIs(absl::StatusCode::kInternal,
               AllOf(HasSubstr("Input/output error"),
                     HasSubstr("injected storage fault 1 of 2"),
                     HasSubstr("sync of /d/000004.log failed"),
                     HasSubstr("[op=sync,file=.log,after=2,count=2]"))));
  EXPECT_THAT(injector.Check(Op::kSync, "/d/000004.log"),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("fault 2 of 2")));
  EXPECT_THAT(injector.Check(Op::kSync, "/d/000004.log"), IsOk());
  EXPECT_EQ(injector.injected(), 2u);
}

TEST(SpecFaultInjectorTest, PersistentFullDisk) {
  SpecFaultInjector injector(Parse("op=full_disk,after=1,persistent"));
  EXPECT_THAT(injector.Check(Op::kWrite, "/d/000004.log"), IsOk());
  for (int i = 0; i < 100; ++i) {
    EXPECT_THAT(injector.Check(Op::kWrite, "/d/000009.sst"),
                StatusIs(absl::StatusCode::kResourceExhausted,
                         AllOf(HasSubstr("No space left on device"),
                               HasSubstr("(persistent)"),
                               HasSubstr("write of /d/000009.sst"))));
  }
  EXPECT_THAT(injector.Check(Op::kRead, "/d/000009.sst"), IsOk());
}

TEST(SpecFaultInjectorTest, DisarmedOperationsAreNotCounted) {
  SpecFaultInjector injector(Parse("op=write,after=1"));
  injector.SetArmed(false);
  for (int i = 0; i < 5; ++i)
    EXPECT_THAT(injector.Check(Op::kWrite, "f"), IsOk());
  injector.SetArmed(true);
  EXPECT_THAT(injector.Check(Op::kWrite, "f"), IsOk());
  EXPECT_FALSE(injector.Check(Op::kWrite, "f").ok());
  EXPECT_EQ(injector.injected(), 1u);
}

TEST(SpecFaultInjectorTest, ProbabilityIsSeededAndBoundedByCount) {
  auto faults_at = [](const std::string& text) {
    SpecFaultInjector injector(Parse(text));
    std::vector<int> at;
    for (int i = 0; i < 2000; ++i) {
      if (!injector.Check(Op::kRead, "/d/1.sst").ok()) at.push_back(i);
    }
    return at;
  };
  const std::vector<int> a =
      faults_at("op=read,probability=0.01,seed=4,count=5");
  EXPECT_EQ(a.size(), 5u);
  EXPECT_EQ(a, faults_at("op=read,probability=0.01,seed=4,count=5"));
  EXPECT_NE(a, faults_at("op=read,probability=0.01,seed=5,count=5"));
  const std::vector<int> many = faults_at("op=read,probability=0.5,persistent");
  EXPECT_GT(many.size(), 800u);
  EXPECT_LT(many.size(), 1200u);
}

}  // namespace
}  // namespace backfill
