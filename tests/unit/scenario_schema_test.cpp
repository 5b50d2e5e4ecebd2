// The scenario schema against the parser: every bounded field and every choice is refused outside its entry's range
// at its own pointer, defaults are the parser's, and the table is well formed.
#include "partsim/input/json_file.hpp"
#include "partsim/input/scenario_schema.hpp"
#include "partsim/plan/strategy.hpp"

#include "test_support.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

namespace partsim {
namespace {

using nlohmann::json;

/** The shipped scenarios, and variants that reach what none of them has (a rail network, a 3-level fat-tree). */
std::vector<json> hosts() {
  std::vector<json> out;
  for (const char* folder : {"scenarios", "validation"})
    for (const auto& entry : std::filesystem::directory_iterator(test::source_dir() / folder))
      if (entry.path().extension() == ".json") {
        json doc = read_json_file(entry.path());
        // Parsed as test.json (no folder): a trace's path relative to the scenario's folder is made whole.
        const json::json_pointer trace("/workload/arrivals/trace/csv");
        if (doc.contains(trace)) doc[trace] = (entry.path().parent_path() / doc[trace].get<std::string>()).string();
        out.push_back(std::move(doc));
      }
  std::sort(out.begin(), out.end(), [](const json& a, const json& b) { return a.at("name") < b.at("name"); });
  // A straggler slow-down of each law (the shipped scenario gives a number).
  const json::json_pointer slowdown("/cluster/stragglers/random/slowdown");
  for (const json& doc : std::vector<json>(out)) {
    if (!doc.contains(slowdown)) continue;
    for (const json& law : {json{{"distribution", "fixed"}, {"factor", 0.7}},
                            json{{"distribution", "uniform"}, {"min", 0.5}, {"max", 0.9}},
                            json{{"distribution", "lognormal"}, {"mean", 0.8}, {"cv", 0.3}}}) {
      json variant = doc;
      variant[slowdown] = law;
      out.push_back(variant);
    }
    break;
  }
  for (const json& doc : std::vector<json>(out)) {
    const json& net = doc.at("cluster").value("network", json::object());
    if (net.value("topology", "star") != "fat_tree") continue;
    json rail = doc;
    rail["cluster"]["network"].erase("fat_tree");
    rail["cluster"]["network"]["topology"] = "rail";
    rail["cluster"]["network"]["nics_per_node"] = doc["cluster"]["gpus_per_node"];
    rail["cluster"]["network"]["rail"] = {{"spine_oversubscription", 2}, {"switch_latency", "100ns"}};
    out.push_back(rail);
    json pods = doc;
    pods["cluster"]["network"]["fat_tree"]["levels"] = 3;
    pods["cluster"]["network"]["fat_tree"]["leaves_per_pod"] = 2;
    pods["cluster"]["network"]["fat_tree"]["pod_oversubscription"] = 2;
    out.push_back(pods);
    break;
  }
  return out;
}

bool kind_matches(const FieldSpec& field, const json& doc) {
  if (field.kinds.empty()) return true;
  const std::string top = field.pointer.substr(0, field.pointer.find('/', 1));
  const std::string kind = doc.value(json::json_pointer(top + "/kind"), std::string());
  return std::find(field.kinds.begin(), field.kinds.end(), kind) != field.kinds.end();
}

/** Values outside the entry's range or choices, each of which the parser must refuse at the entry's pointer. */
std::vector<json> outside(const FieldSpec& f) {
  std::vector<json> out;
  switch (f.type) {
  case FieldType::Integer:
    if (f.int_max < std::numeric_limits<std::int64_t>::max()) out.emplace_back(f.int_max + 1);
    if (f.int_min > std::numeric_limits<std::int64_t>::min()) out.emplace_back(f.int_min - 1);
    break;
  case FieldType::Number:
  case FieldType::Quantity:
    if (f.max < 1e308) out.emplace_back(f.max * 2 + 1);
    out.emplace_back(f.min_exclusive ? f.min : f.min - 1);
    break;
  case FieldType::Choice:
    out.emplace_back("no_such_choice");
    break;
  default:
    break;
  }
  return out;
}

/** Parses `doc` with `pointer` set to `value` (creating its parent object when the grandparent has it): the
 * pointer of the error, "" when it parsed, or nullopt when the host cannot hold the field. */
std::optional<std::string> refused_at(json doc, const std::string& pointer, const json& value) {
  const json::json_pointer at(pointer);
  const json::json_pointer parent = at.parent_pointer();
  if (!doc.contains(parent)) {
    if (!doc.contains(parent.parent_pointer()) || !doc[parent.parent_pointer()].is_object()) return std::nullopt;
    doc[parent] = json::object();
  }
  if (!doc[parent].is_object()) return std::nullopt;
  doc[at] = value;
  try {
    test::parse(doc);
  } catch (const InputError& e) {
    // An unknown key would be refused at the same pointer: that is not the parser enforcing the entry.
    if (std::string(e.what()).find("unknown key") != std::string::npos) return "(unknown key)";
    return e.pointer();
  }
  return std::string();
}

TEST(ScenarioSchema, EveryRangeAndChoiceIsEnforcedAtItsPointer) {
  const std::vector<json> documents = hosts();
  std::vector<std::string> untested;
  int checked = 0;
  for (const FieldSpec& f : scenario_schema().fields()) {
    if (f.opaque || f.pointer.find('*') != std::string::npos) continue;
    for (const json& value : outside(f)) {
      bool done = false;
      std::vector<std::string> seen;
      for (const json& doc : documents) {
        if (!kind_matches(f, doc)) continue;
        const std::optional<std::string> at = refused_at(doc, f.pointer, value);
        if (!at) continue;
        if (*at == f.pointer) {
          done = true;
          break;
        }
        seen.push_back(at->empty() ? std::string("(accepted)") : *at);
      }
      if (done)
        ++checked;
      else
        untested.push_back(fmt::format("{} = {} (errors at: {})", f.pointer, value.dump(), fmt::join(seen, ", ")));
    }
  }
  EXPECT_TRUE(untested.empty()) << "values outside the schema no host scenario refused at their pointer:\n"
                                << fmt::format("{}", fmt::join(untested, "\n"));
  EXPECT_GT(checked, 100);
}

TEST(ScenarioSchema, DefaultsAreThoseTheParserTakes) {
  // Giving every defaulted field its default explicitly parses to the same scenario as leaving it out.
  for (const json& doc : hosts()) {
    const Scenario plain = test::parse(doc);
    json explicit_doc = doc;
    int set = 0;
    for (const FieldSpec& f : scenario_schema().fields()) {
      if (!f.default_value || f.pointer.find('*') != std::string::npos || !kind_matches(f, doc)) continue;
      const json::json_pointer at(f.pointer);
      if (explicit_doc.contains(at) || !explicit_doc.contains(at.parent_pointer()) ||
          !explicit_doc[at.parent_pointer()].is_object())
        continue;
      if (f.pointer == "/strategy/shares" || f.pointer == "/strategy/placement" || f.pointer == "/strategy/zero") {
        if (doc.at("strategy").at("kind") == "collective") continue;
      }
      // Keys that only some configurations accept (pods of a 2-level tree, an exponent of zipf routing) are left out.
      if (f.pointer == "/cluster/network/fat_tree/pod_oversubscription" || f.pointer == "/workload/root" ||
          f.pointer == "/workload/expert_routing/zipf_exponent")
        continue;
      explicit_doc[at] = *f.default_value;
      ++set;
    }
    const Scenario given = test::parse(explicit_doc);
    EXPECT_EQ(given.description, plain.description);
    EXPECT_EQ(given.run.seed, plain.run.seed);
    EXPECT_EQ(given.run.max_events, plain.run.max_events);
    EXPECT_EQ(given.run.fold_replicas, plain.run.fold_replicas);
    EXPECT_EQ(given.run.lean_engine, plain.run.lean_engine);
    // The whole plan: a default that differed from the parser's would change what is simulated.
    const Plan a = build_plan(plain);
    const Plan b = build_plan(given);
    EXPECT_EQ(a.summary, b.summary) << doc.at("name");
    EXPECT_EQ(a.planned_messages, b.planned_messages) << doc.at("name");
    EXPECT_EQ(a.planned_executions, b.planned_executions) << doc.at("name");
    EXPECT_EQ(a.baseline_amount, b.baseline_amount) << doc.at("name");
    ASSERT_EQ(a.ranks.size(), b.ranks.size());
    for (std::size_t r = 0; r < a.ranks.size(); ++r)
      EXPECT_EQ(a.steps_of(static_cast<int>(r)).size(), b.steps_of(static_cast<int>(r)).size());
    EXPECT_GT(set, 0) << doc.at("name");
  }
}

TEST(ScenarioSchema, IsWellFormed) {
  const Schema& schema = scenario_schema();
  std::set<std::string> sections;
  for (const SchemaSection& s : scenario_schema_sections()) sections.insert(s.id);
  for (const FieldSpec& f : schema.fields()) {
    if (!f.section.empty()) {
      EXPECT_TRUE(sections.contains(f.section)) << f.pointer << ": section " << f.section;
    }
    const std::string parent = f.pointer.substr(0, f.pointer.rfind('/'));
    if (!parent.empty()) {
      EXPECT_NE(schema.find(parent, f.kinds.empty() ? "" : f.kinds.front()), nullptr) << f.pointer;
    }
    EXPECT_FALSE(f.doc.empty()) << f.pointer;
    if (f.type == FieldType::Choice) {
      EXPECT_FALSE(f.choices.empty()) << f.pointer;
      if (f.default_value) {
        EXPECT_NE(std::find(f.choices.begin(), f.choices.end(), f.default_value->get<std::string>()), f.choices.end())
            << f.pointer;
      }
    }
    if (f.type == FieldType::Integer && f.default_value) {
      EXPECT_GE(f.default_value->get<std::int64_t>(), f.int_min) << f.pointer;
      EXPECT_LE(f.default_value->get<std::int64_t>(), f.int_max) << f.pointer;
    }
  }
  EXPECT_EQ(schema_pattern("/cluster/speed_changes/12/points/0"), "/cluster/speed_changes/*/points/*");
  EXPECT_EQ(schema_pattern(""), "");
}

TEST(ScenarioSchema, ReferenceMarkersAreChecked) {
  EXPECT_THROW(update_schema_tables("<!-- fields: nowhere -->\n<!-- end fields -->\n", "t.md"), InputError);
  EXPECT_THROW(update_schema_tables("<!-- fields: run -->\n", "t.md"), InputError);
  const std::string table =
      update_schema_tables("a\n<!-- fields: run -->\nSTALE-LINE\n<!-- end fields -->\nb\n", "t.md");
  EXPECT_NE(table.find("| `seed` | integer |"), std::string::npos);
  EXPECT_EQ(table.find("STALE-LINE"), std::string::npos);
  EXPECT_TRUE(table.ends_with("<!-- end fields -->\nb\n"));
}

} // namespace
} // namespace partsim
