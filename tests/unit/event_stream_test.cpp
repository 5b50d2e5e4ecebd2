// The machine-readable stream: every line written is read back as the same event; text lines are not events.
#include "partsim/common/event_stream.hpp"

#include <gtest/gtest.h>

namespace partsim {
namespace {

std::string without_newline(const std::string& line) {
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line";
  return line.substr(0, line.size() - 1);
}

TEST(EventStream, ProgressRoundTrips) {
  const auto e = parse_stream_line(without_newline(progress_line(42, 100)));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, StreamEvent::Kind::Progress);
  EXPECT_EQ(e->done, 42U);
  EXPECT_EQ(e->total, 100U);
  const auto s = parse_stream_line(without_newline(sweep_progress_line(3, 8)));
  ASSERT_TRUE(s);
  EXPECT_EQ(s->kind, StreamEvent::Kind::SweepProgress);
  EXPECT_EQ(s->done, 3U);
  EXPECT_EQ(s->total, 8U);
}

TEST(EventStream, ErrorRoundTripsWithItsPointer) {
  const std::string message = "x.json: /cluster/nodes: expected an integer >= 1, got \"a\\nb\"";
  const auto e = parse_stream_line(without_newline(error_line(2, "x.json", "/cluster/nodes", message)));
  ASSERT_TRUE(e);
  EXPECT_EQ(e->kind, StreamEvent::Kind::Error);
  EXPECT_EQ(e->exit_code, 2);
  EXPECT_EQ(e->source, "x.json");
  EXPECT_EQ(e->pointer, "/cluster/nodes");
  EXPECT_EQ(e->message, message);
  // Bytes that are not UTF-8 are replaced, never a failure to report the error.
  EXPECT_TRUE(parse_stream_line(without_newline(error_line(1, "", "", "bad \xFF byte"))));
}

TEST(EventStream, TextLinesAreNotEvents) {
  for (const char* line : {"", "partsim: error: x.json: /a: b", "\rpartsim: simulating  42.0% (1 of 2 events)", "{",
                           "{\"other\": 1}", "{\"progress\": {\"done\": \"x\", \"planned\": 1}}", "[1]"})
    EXPECT_FALSE(parse_stream_line(line)) << line;
}

} // namespace
} // namespace partsim
