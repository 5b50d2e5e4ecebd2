// Expectations of a scenario (`/expect`): parsing with precise errors, and the check against a report.
#include "test_support.hpp"

#include "partsim/batch/expectations.hpp"
#include "partsim/common/error.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace partsim {
namespace {

using nlohmann::json;

Scenario with_expect(const json& expect) {
  json doc = test::base_scenario(1, 2);
  doc["expect"] = expect;
  return test::parse(doc);
}

const json kReport = {{"verdict", "simulated"},
                      {"summary", {{"makespan_s", 10.0}, {"mfu", 0.45}, {"gpus", 2}}},
                      {"collectives", json::array({{{"busbw_bytes_per_s", 2.3e11}}})}};

TEST(Expectations, BoundsHoldOrNameTheFigureTheBoundAndTheValue) {
  const Scenario s = with_expect({{"/verdict", "simulated"},
                                  {"/summary/makespan_s", {{"max", 40}}},
                                  {"/summary/mfu", {{"min", 0.5}}},
                                  {"/summary/gpus", 2},
                                  {"/collectives/0/busbw_bytes_per_s", {{"value", 2.4e11}, {"tolerance", 0.05}}},
                                  {"/summary/tokens_per_s", {{"min", 1}}}});
  const auto results = check_expectations(s, kReport);
  ASSERT_EQ(results.size(), 6u); // by pointer, sorted
  std::map<std::string, ExpectationResult> by;
  for (const auto& r : results) by[r.figure] = r;
  EXPECT_TRUE(by["/verdict"].holds);
  EXPECT_TRUE(by["/summary/makespan_s"].holds);
  EXPECT_TRUE(by["/summary/gpus"].holds);
  EXPECT_TRUE(by["/collectives/0/busbw_bytes_per_s"].holds) << "2.3e11 is within 5% of 2.4e11";
  EXPECT_FALSE(by["/summary/mfu"].holds);
  EXPECT_EQ(describe_failure(by["/summary/mfu"]), "/summary/mfu: expected at least 0.5, got 0.45");
  EXPECT_FALSE(by["/summary/tokens_per_s"].holds);
  EXPECT_EQ(by["/summary/tokens_per_s"].actual, "absent");
  // A relative tolerance is a bound in both directions; a string never equals a number.
  const auto tight = check_expectations(
      with_expect({{"/summary/makespan_s", {{"value", 10.5}, {"tolerance", 0.04}}}, {"/verdict", 1}}), kReport);
  EXPECT_FALSE(tight[0].holds || tight[1].holds);
  EXPECT_EQ(describe_failure(tight[0]), "/summary/makespan_s: expected 10.5 within 4%, got 10");
}

TEST(Expectations, BadBoundsAreRefusedWithTheirPointer) {
  const auto error_of = [](const json& expect) {
    try {
      with_expect(expect);
    } catch (const InputError& e) {
      return e.pointer() + ": " + e.detail();
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of(json::array()).substr(0, 9), "/expect: ");
  EXPECT_NE(error_of({{"summary", 1}}).find("/expect/summary: expected a JSON pointer"), std::string::npos);
  EXPECT_NE(error_of({{"/summary/mfu", {{"mn", 1}}}}).find("/expect/~1summary~1mfu/mn: unknown key"),
            std::string::npos);
  EXPECT_NE(error_of({{"/summary/mfu", json::object()}}).find("expected at least one of"), std::string::npos);
  EXPECT_NE(error_of({{"/summary/mfu", {{"min", "a"}}}}).find("/min: expected a finite number"), std::string::npos);
  EXPECT_NE(error_of({{"/summary/mfu", {{"min", 2}, {"max", 1}}}}).find("min <= max"), std::string::npos);
  EXPECT_NE(error_of({{"/summary/mfu", {{"tolerance", 0.1}, {"max", 1}}}}).find("needs a value"), std::string::npos);
  EXPECT_NE(error_of({{"/summary/mfu", {{"equals", 1}, {"max", 1}}}}).find("not both"), std::string::npos);
  EXPECT_NE(error_of({{"/summary/mfu", nullptr}}).find("got null"), std::string::npos);
}

} // namespace
} // namespace partsim
