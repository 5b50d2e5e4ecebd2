// The field tables of report_document.hpp walked three ways: a writer, a strict reader and the reference.
#include "partsim/report/report_document.hpp"

#include "partsim/input/json_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <concepts>
#include <limits>
#include <type_traits>

namespace partsim {

namespace {

template <typename T>
struct IsOptional : std::false_type {};
template <typename T>
struct IsOptional<std::optional<T>> : std::true_type {};
template <typename T>
struct IsVector : std::false_type {};
template <typename T>
struct IsVector<std::vector<T>> : std::true_type {};
template <typename T>
struct IsMap : std::false_type {};
template <typename T>
struct IsMap<std::map<std::string, T>> : std::true_type {};

template <typename T>
constexpr bool kIsInteger = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// --- writing ---------------------------------------------------------------------------------------

template <typename T>
void write_value(nlohmann::json& out, const T& value);

struct Writer {
  nlohmann::json& out;

  template <typename T>
  void field(const char* key, const T& value, const char*, const char*) {
    if constexpr (IsOptional<T>::value) {
      if (value) write_value(out[key], *value);
    } else {
      write_value(out[key], value);
    }
  }
  void nullable(const char* key, const std::optional<double>& value, const char*, const char*) {
    out[key] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
  }
};

template <typename T>
void write_value(nlohmann::json& out, const T& value) {
  if constexpr (IsVector<T>::value) {
    out = nlohmann::json::array();
    for (const auto& element : value) write_value(out.emplace_back(), element);
  } else if constexpr (IsMap<T>::value) {
    out = nlohmann::json::object();
    for (const auto& [key, element] : value) write_value(out[key], element);
  } else if constexpr (std::is_enum_v<T>) {
    out = std::string(enum_name(value));
  } else if constexpr (std::is_class_v<T> && !std::is_same_v<T, std::string> && !std::is_same_v<T, nlohmann::json>) {
    out = nlohmann::json::object();
    Writer writer{out};
    T::fields(value, writer);
  } else {
    out = value;
  }
}

// --- reading ---------------------------------------------------------------------------------------

template <typename T>
void read_value(const JsonReader& in, T& value);

struct Reader {
  JsonReader& in;

  template <typename T>
  void field(const char* key, T& value, const char*, const char*) {
    if constexpr (IsOptional<T>::value) {
      if (const std::optional<JsonReader> child = in.optional_child(key)) {
        value.emplace();
        read_value(*child, *value);
      } else {
        value.reset();
      }
    } else {
      read_value(in.child(key), value);
    }
  }
  void nullable(const char* key, std::optional<double>& value, const char*, const char*) {
    const JsonReader child = in.child(key);
    if (child.value().is_null())
      value.reset();
    else
      value = child.as_number(Bounds{});
  }
};

template <typename T>
void read_value(const JsonReader& in, T& value) {
  if constexpr (IsVector<T>::value) {
    value.clear();
    for (const JsonReader& element : in.elements(0, std::numeric_limits<std::size_t>::max()))
      read_value(element, value.emplace_back());
  } else if constexpr (IsMap<T>::value) {
    in.expect_object();
    value.clear();
    for (const auto& [key, element] : in.value().items())
      read_value(JsonReader(element, in.source(), in.pointer() + "/" + escape_pointer_token(key)), value[key]);
  } else if constexpr (std::is_same_v<T, nlohmann::json>) {
    in.expect_object();
    value = in.value();
  } else if constexpr (std::is_same_v<T, std::string>) {
    value = in.as_string();
  } else if constexpr (std::is_enum_v<T>) {
    const std::string text = in.as_string();
    const std::optional<T> named = enum_value<T>(text);
    if (!named) throw in.error(fmt::format("expected one of {}, got \"{}\"", fmt::join(enum_names<T>(), ", "), text));
    value = *named;
  } else if constexpr (std::is_same_v<T, bool>) {
    if (!in.value().is_boolean()) throw in.error("expected true or false, got " + in.type_name());
    value = in.value().get<bool>();
  } else if constexpr (kIsInteger<T>) {
    constexpr auto max =
        std::min<std::uint64_t>(std::numeric_limits<T>::max(), std::numeric_limits<std::int64_t>::max());
    const std::int64_t min = std::is_signed_v<T> ? std::numeric_limits<std::int64_t>::min() : 0;
    if (!in.value().is_number_integer()) throw in.error("expected an integer, got " + in.type_name());
    value = static_cast<T>(in.as_integer(min, static_cast<std::int64_t>(max)));
  } else if constexpr (std::is_same_v<T, double>) {
    value = in.as_number(Bounds{});
  } else {
    JsonReader object = in;
    object.expect_object();
    Reader reader{object};
    T::fields(value, reader);
    object.finish();
  }
}

// --- the reference ---------------------------------------------------------------------------------

struct ReferenceRow {
  std::string pointer;
  std::string type;
  std::string unit;
  std::string meaning;
};

template <typename T>
std::string type_name() {
  if constexpr (IsVector<T>::value)
    return "array";
  else if constexpr (IsMap<T>::value)
    return "object";
  else if constexpr (std::is_same_v<T, nlohmann::json>)
    return "object";
  else if constexpr (std::is_same_v<T, std::string>)
    return "string";
  else if constexpr (std::is_enum_v<T>)
    return fmt::format("string: {}", fmt::join(enum_names<T>(), ", "));
  else if constexpr (std::is_same_v<T, bool>)
    return "boolean";
  else if constexpr (kIsInteger<T>)
    return "integer";
  else if constexpr (std::is_same_v<T, double>)
    return "number";
  else
    return "object";
}

template <typename T>
void describe(const std::string& pointer, const char* unit, std::vector<ReferenceRow>& rows);

struct Describer {
  std::string prefix;
  std::vector<ReferenceRow>& rows;

  template <typename T>
  void field(const char* key, const T&, const char* unit, const char* meaning) {
    const std::string pointer = prefix + "/" + key;
    if constexpr (IsOptional<T>::value) {
      using Inner = typename T::value_type;
      rows.push_back({pointer, type_name<Inner>() + ", optional", unit, meaning});
      describe<Inner>(pointer, unit, rows);
    } else {
      rows.push_back({pointer, type_name<T>(), unit, meaning});
      describe<T>(pointer, unit, rows);
    }
  }
  void nullable(const char* key, const std::optional<double>&, const char* unit, const char* meaning) {
    rows.push_back({prefix + "/" + key, "number or null", unit, meaning});
  }
};

template <typename T>
void describe(const std::string& pointer, const char* unit, std::vector<ReferenceRow>& rows) {
  if constexpr (IsVector<T>::value) {
    using Element = typename T::value_type;
    if constexpr (std::is_class_v<Element> && !std::is_same_v<Element, std::string>)
      describe<Element>(pointer + "/*", unit, rows);
  } else if constexpr (IsMap<T>::value) {
    rows.push_back({pointer + "/<name>", type_name<typename T::mapped_type>(), unit, "the value for that name"});
  } else if constexpr (std::is_class_v<T> && !std::is_same_v<T, std::string> && !std::is_same_v<T, nlohmann::json>) {
    const T value{};
    Describer describer{pointer, rows};
    T::fields(value, describer);
  }
}

// --- figures ---------------------------------------------------------------------------------------

struct FigureCollector {
  std::vector<ReportFigure>& out;

  template <typename T>
  void field(const char* key, const T& value, const char*, const char*) {
    if constexpr (IsOptional<T>::value) {
      if (value) field(key, *value, nullptr, nullptr);
    } else if constexpr (kIsInteger<T> || std::is_same_v<T, double>) {
      out.emplace_back(key, static_cast<double>(value));
    }
  }
  void nullable(const char* key, const std::optional<double>& value, const char*, const char*) {
    if (value) out.emplace_back(key, *value);
  }
};

template <typename T>
std::vector<ReportFigure> collect_figures(const T& section) {
  std::vector<ReportFigure> out;
  FigureCollector collector{out};
  T::fields(section, collector);
  // report.json's objects are sorted by key.
  std::stable_sort(out.begin(), out.end(),
                   [](const ReportFigure& a, const ReportFigure& b) { return a.first < b.first; });
  return out;
}

} // namespace

namespace {
/** The cluster's GPU count in a scenario input; an InputError at its pointer when it is missing. */
std::int64_t cluster_gpus(const nlohmann::json& input, const std::string& source) {
  JsonReader scenario(input, source, "/scenario/input");
  JsonReader cluster = scenario.child("cluster");
  constexpr std::int64_t kMax = std::numeric_limits<int>::max();
  return cluster.integer("nodes", 1, kMax) * cluster.integer("gpus_per_node", 1, kMax);
}
} // namespace

std::int64_t ReportDocument::gpus() const {
  return summary ? summary->gpus : cluster_gpus(scenario.input, "report.json");
}

std::vector<ReportFigure> ReportSummary::figures() const {
  return collect_figures(*this);
}

std::vector<ReportFigure> figures(const ReportMemory& memory) {
  return collect_figures(memory);
}

nlohmann::json to_json(const ReportDocument& document) {
  nlohmann::json out;
  write_value(out, document);
  return out;
}

ReportDocument report_document_from_json(const nlohmann::json& json, const std::string& source) {
  ReportDocument document;
  const JsonReader in(json, source);
  read_value(in, document);
  if (document.schema != "partsim.report")
    throw InputError(source, "/schema", fmt::format("expected \"partsim.report\", got \"{}\"", document.schema));
  if (document.schema_version != kReportSchemaVersion)
    throw InputError(source, "/schema_version",
                     fmt::format("expected schema version {}, got {}", kReportSchemaVersion, document.schema_version));
  if (!document.out_of_memory() && !document.summary)
    throw InputError(source, "/summary", "required key is missing (the verdict is simulated)");
  if (!document.summary) cluster_gpus(document.scenario.input, source);
  return document;
}

std::string report_reference_markdown() {
  std::vector<ReferenceRow> rows;
  describe<ReportDocument>("", "", rows);
  std::string out = fmt::format(
      "# report.json reference (schema version {})\n\n"
      "Generated from the field tables of `sim/include/partsim/report/report_document.hpp` by\n"
      "`build/tests/partsim_report_reference > docs/report-reference.md`; a unit test checks that this file is "
      "current.\n\n"
      "`partsim run` writes report.json (and prints it with `--json`); the sweep and the GUI read it back with the "
      "same\n"
      "code, strictly: a missing key, an unknown key or a value of the wrong type is an error naming the file and "
      "the\n"
      "JSON pointer. Objects are written with their keys sorted. `*` in a pointer stands for any index of an array, "
      "and\n"
      "`<name>` for any key of an object. A field marked optional is present only in the runs its meaning names.\n\n"
      "| Pointer | Type | Unit | Meaning |\n|---|---|---|---|\n",
      kReportSchemaVersion);
  for (const ReferenceRow& row : rows)
    out += fmt::format("| `{}` | {} | {} | {} |\n", row.pointer, row.type, row.unit, row.meaning);
  return out;
}

} // namespace partsim
