// One table of names per enum, read in both directions (as DuckDB's enum_util): the parser's choices, the writers'
// strings and the GUI's combo boxes all come from it. Each enum's table is a specialisation of EnumNames next to the
// enum, in the order the choices are listed in messages and the reference.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace partsim {

template <typename E>
struct EnumEntry {
  E value;
  std::string_view name;
};

/** Specialised for each enum E: `static constexpr std::array<EnumEntry<E>, N> entries{{{E::A, "a"}, ...}};` */
template <typename E>
struct EnumNames;

template <typename E>
concept NamedEnum = requires {
  EnumNames<E>::entries;
};

/** The name of `value` ("?" for a value outside the table, which a test of each table rules out). */
template <NamedEnum E>
constexpr std::string_view enum_name(E value) {
  for (const EnumEntry<E>& entry : EnumNames<E>::entries)
    if (entry.value == value) return entry.name;
  return "?";
}

/** The value named `name`, or nullopt. */
template <NamedEnum E>
constexpr std::optional<E> enum_value(std::string_view name) {
  for (const EnumEntry<E>& entry : EnumNames<E>::entries)
    if (entry.name == name) return entry.value;
  return std::nullopt;
}

/** Every name, in table order (a parser's allowed values). */
template <NamedEnum E>
std::vector<std::string> enum_names() {
  std::vector<std::string> names;
  for (const EnumEntry<E>& entry : EnumNames<E>::entries) names.emplace_back(entry.name);
  return names;
}

} // namespace partsim
