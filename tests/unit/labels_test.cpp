// Labels: the portable generators, generated labels, and the streaming CSV label reader with its errors.
#include "partsim/common/error.hpp"
#include "partsim/common/random.hpp"
#include "partsim/input/labels.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace partsim {
namespace {

namespace fs = std::filesystem;

fs::path write_file(const std::string& name, const std::string& content) {
  const fs::path path = test::temp_dir() / name;
  std::ofstream out(path, std::ios::binary);
  out << content;
  return path;
}

/** Runs `read`, which must throw an InputError whose message holds every one of `parts`. */
void expect_input_error(const std::function<void()>& read, const std::vector<std::string>& parts) {
  try {
    read();
  } catch (const InputError& e) {
    const std::string message = e.what();
    for (const std::string& part : parts) EXPECT_NE(message.find(part), std::string::npos) << message;
    return;
  }
  FAIL() << "no InputError";
}

std::uint64_t count_class(const Labels& labels, ClassIndex c) {
  std::uint64_t n = 0;
  for (const ClassIndex label : labels.classes) n += label == c ? 1 : 0;
  return n;
}

TEST(LabelsRandom, SplitMix64ReferenceValues) {
  // The first outputs from seed 0 of Vigna's reference splitmix64.c.
  SplitMix64 rng(0);
  EXPECT_EQ(rng.next(), 0xe220a8397b1dcdafULL);
  EXPECT_EQ(rng.next(), 0x6e789e6aa1b965f4ULL);
  EXPECT_EQ(rng.next(), 0x06c45d188009454fULL);
}

TEST(LabelsRandom, Xoshiro256StarStarReferenceValues) {
  // State {1, 2, 3, 4}: the first output is rotl(2 x 5, 7) x 9 = 1280 x 9; the step then makes s[1] = 0, so the
  // second is 0; the rest are from the authors' xoshiro256starstar.c.
  Xoshiro256StarStar rng(std::array<std::uint64_t, 4>{1, 2, 3, 4});
  EXPECT_EQ(rng.next(), 11520u);
  EXPECT_EQ(rng.next(), 0u);
  EXPECT_EQ(rng.next(), 1509978240u);
  EXPECT_EQ(rng.next(), 1215971899390074240u);
}

TEST(LabelsRandom, BelowIsUniform) {
  Xoshiro256StarStar rng(7);
  constexpr int kDraws = 60000;
  std::array<int, 6> counts{};
  for (int i = 0; i < kDraws; ++i) {
    const std::uint64_t r = rng.below(6);
    ASSERT_LT(r, 6u);
    ++counts[r];
  }
  // Each face: Binomial(60000, 1/6), mean 10000, standard deviation sqrt(60000 x 1/6 x 5/6).
  const double sd = std::sqrt(kDraws * (1.0 / 6) * (5.0 / 6));
  for (const int c : counts) EXPECT_LT(std::fabs(c - kDraws / 6.0), 4 * sd) << c;
  for (int i = 0; i < 1000; ++i) {
    const double u = rng.uniform();
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
  }
}

TEST(LabelsGenerate, SameSeedSameLabels) {
  const Labels a = generate_labels(100'000, 0.01, 2024);
  const Labels b = generate_labels(100'000, 0.01, 2024);
  const Labels c = generate_labels(100'000, 0.01, 2025);
  EXPECT_EQ(a.classes, b.classes);
  EXPECT_NE(a.classes, c.classes);
  EXPECT_EQ(a.class_names, (std::vector<std::string>{"0", "1"}));
  // Every platform gives these: 1057 positives, the first at samples 25, 531, 695, 726, 730 (from an
  // independent Python implementation of SplitMix64-seeded xoshiro256** and uniform() < rate).
  EXPECT_EQ(count_class(a, 1), 1057u);
  std::vector<std::size_t> first;
  for (std::size_t i = 0; i < a.size() && first.size() < 5; ++i)
    if (a.classes[i] == 1) first.push_back(i);
  EXPECT_EQ(first, (std::vector<std::size_t>{25, 531, 695, 726, 730}));
}

TEST(LabelsGenerate, PositiveRateWithinBinomialBand) {
  constexpr std::uint64_t kSamples = 1'000'000;
  for (const double rate : {0.005, 0.3}) {
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
      const Labels labels = generate_labels(kSamples, rate, seed);
      ASSERT_EQ(labels.size(), kSamples);
      const double mean = kSamples * rate;
      const double sd = std::sqrt(kSamples * rate * (1 - rate));
      const auto positives = static_cast<double>(count_class(labels, 1));
      EXPECT_LT(std::fabs(positives - mean), 4 * sd) << "rate " << rate << " seed " << seed << ": " << positives;
      EXPECT_EQ(labels.class_totals(),
                (std::vector<std::uint64_t>{kSamples - count_class(labels, 1), count_class(labels, 1)}));
    }
  }
}

TEST(LabelsGenerate, RatesZeroAndOne) {
  EXPECT_EQ(generate_labels(1000, 0.0, 5).class_totals(), (std::vector<std::uint64_t>{1000, 0}));
  EXPECT_EQ(generate_labels(1000, 1.0, 5).class_totals(), (std::vector<std::uint64_t>{0, 1000}));
}

TEST(LabelsCsv, ReadsTheNamedColumn) {
  const fs::path path = write_file("labels.csv", "id,label,amount\n1,fraud,3.5\n2,ok,4\n3,ok,1\n4,fraud,2\n5,ok,0\n");
  const Labels labels = read_label_csv(path, "label");
  EXPECT_EQ(labels.class_names, (std::vector<std::string>{"fraud", "ok"}));
  EXPECT_EQ(labels.classes, (std::vector<ClassIndex>{0, 1, 1, 0, 1}));
  EXPECT_EQ(labels.class_totals(), (std::vector<std::uint64_t>{2, 3}));
  EXPECT_EQ(labels.find_class("ok"), std::optional<std::size_t>{1});
  EXPECT_EQ(labels.find_class("missing"), std::nullopt);
  EXPECT_EQ(labels.source, path.string());
}

TEST(LabelsCsv, ClassesAreNumberedInNameOrder) {
  const Labels labels = read_label_csv(write_file("order.csv", "y\nc\na\nb\na\n"), "y");
  EXPECT_EQ(labels.class_names, (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_EQ(labels.classes, (std::vector<ClassIndex>{2, 0, 1, 0}));
}

TEST(LabelsCsv, QuotedFieldsWithCommasQuotesAndLineBreaks) {
  const std::string text = "id,\"note, free\",label\n"
                           "1,\"says \"\"hi\"\", twice\",\"no, really\"\n"
                           "2,\"two\nlines\",\"\"\"quoted\"\"\"\n"
                           "3,plain,\"no, really\"\n";
  const Labels labels = read_label_csv(write_file("quoted.csv", text), "label");
  EXPECT_EQ(labels.class_names, (std::vector<std::string>{"\"quoted\"", "no, really"}));
  EXPECT_EQ(labels.classes, (std::vector<ClassIndex>{1, 0, 1}));
  // The quoted header field is found by its unquoted name.
  EXPECT_EQ(read_label_csv(write_file("quoted.csv", text), "note, free").class_names,
            (std::vector<std::string>{"plain", "says \"hi\", twice", "two\nlines"}));
}

TEST(LabelsCsv, CrlfAndCrLineEnds) {
  const std::vector<std::string> expected{"x", "y"};
  for (const std::string& text :
       {std::string("a,label\r\n1,x\r\n2,y\r\n3,x\r\n"), std::string("a,label\r1,x\r2,y\r3,x"),
        std::string("a,label\r\n1,\"x\"\r\n2,\"y\"\r\n3,x")}) {
    const Labels labels = read_label_csv(write_file("crlf.csv", text), "label");
    EXPECT_EQ(labels.class_names, expected);
    EXPECT_EQ(labels.classes, (std::vector<ClassIndex>{0, 1, 0}));
  }
  // A CRLF is one line end: the short row is on line 3.
  const fs::path crlf_short = write_file("crlf-short.csv", "a,label\r\n1,x\r\n2\r\n");
  expect_input_error([&] { read_label_csv(crlf_short, "label"); }, {"line 3", "too few"});
}

TEST(LabelsCsv, BlankLinesByteOrderMarkAndOtherDelimiter) {
  const Labels labels =
      read_label_csv(write_file("bom.csv", "\xEF\xBB\xBFlabel;v\n\n0;1,5\n\r\n1;2,5\n\n"), "label", ';');
  EXPECT_EQ(labels.class_names, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(labels.classes, (std::vector<ClassIndex>{0, 1}));
}

TEST(LabelsCsv, MissingColumnNamesTheFileAndTheColumns) {
  const fs::path path = write_file("nocol.csv", "id,amount,class\n1,2,0\n");
  expect_input_error([&] { read_label_csv(path, "label"); },
                     {path.string(), "line 1", "no column 'label'", "'id', 'amount', 'class'"});
}

TEST(LabelsCsv, ShortAndLongRowsNameTheirLine) {
  // Line 3 lacks a field; the quoted line break on line 2 counts as a line.
  const fs::path short_row = write_file("short.csv", "id,note,label\n1,\"a\nb\",0\n2,1\n");
  expect_input_error([&] { read_label_csv(short_row, "label"); },
                     {short_row.string(), "line 4", "2 fields", "too few"});
  const fs::path long_row = write_file("long.csv", "id,label\n1,0\n2,1\n3,1,9\n");
  expect_input_error([&] { read_label_csv(long_row, "label"); }, {long_row.string(), "line 4", "3 fields", "too many"});
}

TEST(LabelsCsv, EmptyAndMissingFiles) {
  const fs::path empty = write_file("empty.csv", "");
  expect_input_error([&] { read_label_csv(empty, "label"); }, {empty.string(), "empty"});
  const fs::path blank = write_file("blank.csv", "\n\r\n\n");
  expect_input_error([&] { read_label_csv(blank, "label"); }, {blank.string(), "empty"});
  const fs::path header_only = write_file("header.csv", "id,label\n");
  expect_input_error([&] { read_label_csv(header_only, "label"); }, {header_only.string(), "no data rows"});
  const fs::path missing = test::temp_dir() / "no-such.csv";
  expect_input_error([&] { read_label_csv(missing, "label"); }, {missing.string(), "cannot open"});
}

TEST(LabelsCsv, BadFieldsNameTheirLine) {
  const fs::path empty_label = write_file("empty-label.csv", "id,label\n1,0\n2,\n");
  expect_input_error([&] { read_label_csv(empty_label, "label"); }, {"line 3", "label column 'label' is empty"});
  const fs::path open_quote = write_file("open.csv", "id,label\n1,0\n2,\"1\n3,0\n");
  expect_input_error([&] { read_label_csv(open_quote, "label"); }, {"line 3", "not closed"});
  const fs::path after_quote = write_file("after.csv", "id,label\n\"1\"x,0\n");
  expect_input_error([&] { read_label_csv(after_quote, "label"); }, {"line 2", "after the closing quote"});
  const fs::path twice = write_file("twice.csv", "label,id,label\n1,2,3\n");
  expect_input_error([&] { read_label_csv(twice, "label"); }, {"line 1", "more than once"});
}

TEST(LabelsCsv, MillionRows) {
  // Row i is positive when i mod 200 = 7: 1,000,000 / 200 = 5000 positives. Quoted fields with commas in between.
  constexpr int kRows = 1'000'000;
  const fs::path path = test::temp_dir() / "million.csv";
  {
    std::ofstream out(path, std::ios::binary);
    std::string chunk = "id,amount,memo,is_fraud\n";
    for (int i = 0; i < kRows; ++i) {
      chunk += std::to_string(i);
      chunk += i % 3 == 0 ? ",12.5,\"card, online\"," : ",7,shop,";
      chunk += i % 200 == 7 ? "1\n" : "0\n";
      if (chunk.size() > (1u << 20)) {
        out << chunk;
        chunk.clear();
      }
    }
    out << chunk;
  }
  const Labels labels = read_label_csv(path, "is_fraud");
  fs::remove(path);
  ASSERT_EQ(labels.size(), static_cast<std::size_t>(kRows));
  EXPECT_EQ(labels.class_names, (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(labels.class_totals(), (std::vector<std::uint64_t>{kRows - kRows / 200, kRows / 200}));
  EXPECT_EQ(labels.classes[7], 1);
  EXPECT_EQ(labels.classes[8], 0);
  EXPECT_EQ(labels.classes[kRows - 193], 1); // 999,807 = 200 x 4999 + 7
}

} // namespace
} // namespace partsim
