// Search spaces: products, constraints, derived values, the space file and each point's overrides.
#include "partsim/batch/search_space.hpp"

#include "partsim/common/error.hpp"
#include "partsim/input/json_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <set>

namespace partsim {

namespace {

std::string trim(const std::string& text) {
  const auto first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

/** `text`: the product; `whole`: what it is part of (a constraint), for errors. */
SearchProduct parse_product(const std::string& text, const std::string& whole, const std::string& source,
                            const std::string& at) {
  SearchProduct product;
  product.text = trim(text);
  std::size_t begin = 0;
  while (true) {
    const auto star = text.find('*', begin);
    const std::string term = trim(text.substr(begin, star == std::string::npos ? std::string::npos : star - begin));
    if (term.empty())
      throw InputError(source, at,
                       fmt::format("an empty term in \"{}\"; expected pointers and numbers joined by *", whole));
    if (term[0] == '/') {
      product.terms.emplace_back(term);
    } else {
      char* end = nullptr;
      const double value = std::strtod(term.c_str(), &end);
      if (end != term.c_str() + term.size() || !std::isfinite(value))
        throw InputError(source, at,
                         fmt::format("\"{}\" in \"{}\" is neither a /json/pointer nor a number", term, whole));
      product.terms.emplace_back(value);
    }
    if (star == std::string::npos) break;
    begin = star + 1;
  }
  return product;
}

double evaluate(const SearchProduct& product, const nlohmann::json& document, const std::string& source,
                const std::string& at) {
  double value = 1.0;
  for (const auto& term : product.terms) {
    if (const double* number = std::get_if<double>(&term)) {
      value *= *number;
      continue;
    }
    const std::string& pointer = std::get<std::string>(term);
    const nlohmann::json* found = nullptr;
    try {
      const nlohmann::json::json_pointer p(pointer);
      if (document.contains(p)) found = &document.at(p);
    } catch (const nlohmann::json::exception&) {
      throw InputError(source, at, fmt::format("\"{}\" is not a valid JSON pointer", pointer));
    }
    if (found == nullptr || !found->is_number())
      throw InputError(source, at,
                       fmt::format("{} in \"{}\" is {} in the point's scenario; expected a number there (give it "
                                   "with --set or an axis)",
                                   pointer, product.text, found == nullptr ? "absent" : "not a number"));
    value *= found->get<double>();
  }
  return value;
}

bool compare(double left, Comparison op, double right) {
  switch (op) {
  case Comparison::Less:
    return left < right;
  case Comparison::LessEqual:
    return left <= right;
  case Comparison::Greater:
    return left > right;
  case Comparison::GreaterEqual:
    return left >= right;
  case Comparison::Equal:
    return left == right;
  case Comparison::NotEqual:
    return left != right;
  case Comparison::Divides:
    return left != 0.0 && std::fmod(right, left) == 0.0;
  }
  return false;
}

/** A number as JSON: an integer when it is one (a degree, a batch), else a double. */
nlohmann::json number_json(double value) {
  if (std::nearbyint(value) == value && std::abs(value) < 9.0e15) return static_cast<std::int64_t>(value);
  return value;
}

/** A key as a JSON pointer token (RFC 6901: ~ as ~0, / as ~1). */
std::string escape(const std::string& key) {
  std::string out;
  for (char c : key) out += c == '~' ? std::string("~0") : c == '/' ? std::string("~1") : std::string(1, c);
  return out;
}

void check_pointer(const std::string& pointer, const std::string& source, const std::string& at) {
  try {
    if (!pointer.empty() && pointer[0] == '/') {
      const nlohmann::json::json_pointer p(pointer);
      return;
    }
  } catch (const nlohmann::json::exception&) {
    // below
  }
  throw InputError(source, at, fmt::format("\"{}\" is not a JSON pointer; expected /section/key", pointer));
}

} // namespace

SearchConstraint parse_constraint(const std::string& text, const std::string& source, const std::string& at) {
  static constexpr std::array<std::pair<const char*, Comparison>, 7> kOperators{{{" divides ", Comparison::Divides},
                                                                                 {"<=", Comparison::LessEqual},
                                                                                 {">=", Comparison::GreaterEqual},
                                                                                 {"==", Comparison::Equal},
                                                                                 {"!=", Comparison::NotEqual},
                                                                                 {"<", Comparison::Less},
                                                                                 {">", Comparison::Greater}}};
  for (const auto& [name, op] : kOperators) {
    const auto position = text.find(name);
    if (position == std::string::npos) continue;
    SearchConstraint c;
    c.left = parse_product(text.substr(0, position), trim(text), source, at);
    c.op = op;
    c.right = parse_product(text.substr(position + std::string(name).size()), trim(text), source, at);
    c.text = trim(text);
    c.source = source;
    c.at = at;
    return c;
  }
  throw InputError(
      source, at, fmt::format("expected LEFT OP RIGHT with OP one of <, <=, >, >=, ==, !=, divides, got \"{}\"", text));
}

DerivedValue parse_derived(const std::string& text, const std::string& source, const std::string& at) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq + 1 == text.size())
    throw InputError(source, at,
                     fmt::format("expected /json/pointer=default or /json/pointer=PRODUCT, got \"{}\"", text));
  DerivedValue d;
  d.pointer = trim(text.substr(0, eq));
  check_pointer(d.pointer, source, at);
  d.text = trim(text.substr(eq + 1));
  if (d.text != "default") d.product = parse_product(d.text, trim(text), source, at);
  d.source = source;
  d.at = at;
  return d;
}

SearchSpace parse_search_space(const nlohmann::json& document, const std::string& source) {
  if (!document.is_object())
    throw InputError(source, "", "expected an object with \"axes\", \"set\", \"derived\" and \"constraints\"");
  SearchSpace space;
  for (const auto& [key, value] : document.items()) {
    const std::string at = "/" + key;
    if (key == "axes") {
      if (!value.is_object() || value.empty())
        throw InputError(source, at, "expected an object of /json/pointer: [values]");
      for (const auto& [pointer, values] : value.items()) {
        const std::string where = at + "/" + escape(pointer);
        check_pointer(pointer, source, where);
        if (!values.is_array() || values.empty())
          throw InputError(source, where, "expected a non-empty array of the values to try");
        SweepAxis axis;
        axis.pointer = pointer;
        for (const nlohmann::json& v : values) {
          axis.values.push_back(v);
          axis.labels.push_back(v.is_string() ? v.get<std::string>() : v.dump());
        }
        space.axes.push_back(std::move(axis));
      }
    } else if (key == "set") {
      if (!value.is_object()) throw InputError(source, at, "expected an object of /json/pointer: value");
      for (const auto& [pointer, v] : value.items()) {
        check_pointer(pointer, source, at + "/" + escape(pointer));
        space.sets.push_back({pointer, v});
      }
    } else if (key == "derived") {
      if (!value.is_object())
        throw InputError(source, at, "expected an object of /json/pointer: \"default\" or \"PRODUCT\"");
      for (const auto& [pointer, v] : value.items()) {
        const std::string where = at + "/" + escape(pointer);
        if (!v.is_string())
          throw InputError(source, where, "expected \"default\" or a product such as \"/strategy/data * 16\"");
        space.derived.push_back(parse_derived(pointer + "=" + v.get<std::string>(), source, where));
      }
    } else if (key == "constraints") {
      if (!value.is_array()) throw InputError(source, at, "expected an array of \"LEFT OP RIGHT\" strings");
      for (std::size_t i = 0; i < value.size(); ++i) {
        const std::string where = at + "/" + std::to_string(i);
        if (!value[i].is_string())
          throw InputError(source, where, "expected a string such as \"/strategy/tensor <= /cluster/gpus_per_node\"");
        space.constraints.push_back(parse_constraint(value[i].get<std::string>(), source, where));
      }
    } else if (key != "description") {
      throw InputError(source, at,
                       "unknown key; expected \"description\", \"axes\", \"set\", \"derived\" or \"constraints\"");
    }
  }
  return space;
}

SearchSpace read_search_space(const std::filesystem::path& path) {
  return parse_search_space(read_json_file(path), path.string());
}

void merge_search_space(SearchSpace& space, const SearchSpace& more) {
  space.axes.insert(space.axes.end(), more.axes.begin(), more.axes.end());
  space.sets.insert(space.sets.end(), more.sets.begin(), more.sets.end());
  space.derived.insert(space.derived.end(), more.derived.begin(), more.derived.end());
  space.constraints.insert(space.constraints.end(), more.constraints.begin(), more.constraints.end());
  std::set<std::string> varied;
  for (const SweepAxis& axis : space.axes)
    if (!varied.insert(axis.pointer).second)
      throw InputError("--vary", axis.pointer, "varied twice; expected each pointer on one axis");
  for (const Override& o : space.sets) varied.insert(o.pointer);
  for (const DerivedValue& d : space.derived)
    if (varied.count(d.pointer) > 0)
      throw InputError(
          d.source, d.at,
          fmt::format("{} is both given (an axis or a fixed value) and derived; expected one of the two", d.pointer));
}

void derive_data_degree(SearchSpace& space, const nlohmann::json& scenario) {
  static const nlohmann::json::json_pointer kData("/strategy/data");
  static const nlohmann::json::json_pointer kKind("/strategy/kind");
  if (!scenario.contains(kData) || !scenario.contains(kKind) || scenario.at(kKind) != "model_parallel") return;
  auto names = [](const std::string& pointer) {
    return pointer == "/strategy/data" || pointer == "/strategy" || pointer == "";
  };
  bool varies_split = false;
  for (const SweepAxis& axis : space.axes) {
    if (names(axis.pointer)) return;
    varies_split = varies_split || axis.pointer == "/strategy/tensor" || axis.pointer == "/strategy/pipeline" ||
                   axis.pointer == "/strategy/context" || axis.pointer.rfind("/cluster", 0) == 0;
  }
  for (const Override& o : space.sets)
    if (names(o.pointer)) return;
  for (const DerivedValue& d : space.derived)
    if (names(d.pointer)) return;
  if (!varies_split) return;
  space.derived.push_back({"/strategy/data", std::nullopt, "default", "<search>", ""});
  space.notes.push_back(fmt::format("/strategy/data (the scenario's {}) derived for each point: the GPU count / "
                                    "(tensor x pipeline x context); give it an axis or a --set to fix it",
                                    scenario.at(kData).dump()));
}

std::vector<Override> point_overrides(const nlohmann::json& scenario, const SearchSpace& space,
                                      const SweepPoint& point) {
  std::vector<Override> overrides = space.sets;
  overrides.insert(overrides.end(), point.overrides.begin(), point.overrides.end());
  if (space.derived.empty()) return overrides;
  nlohmann::json document = scenario;
  apply_overrides(document, overrides);
  for (const DerivedValue& d : space.derived) {
    Override o{d.pointer, nullptr, !d.product};
    if (d.product) o.value = number_json(evaluate(*d.product, document, d.source, d.at));
    apply_overrides(document, {o});
    overrides.push_back(std::move(o));
  }
  return overrides;
}

std::optional<std::size_t> broken_constraint(const SearchSpace& space, const nlohmann::json& document) {
  for (std::size_t i = 0; i < space.constraints.size(); ++i) {
    const SearchConstraint& c = space.constraints[i];
    if (!compare(evaluate(c.left, document, c.source, c.at), c.op, evaluate(c.right, document, c.source, c.at)))
      return i;
  }
  return std::nullopt;
}

} // namespace partsim
