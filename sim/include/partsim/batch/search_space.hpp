// Search spaces: the axes of a search, its fixed and derived values and its constraints over scenario pointers, read
// from the command line or a space file (docs/search.md), and each point's scenario document.
#pragma once

#include "partsim/batch/sweep.hpp"
#include "partsim/input/scenario.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace partsim {

/** A product of terms, each a scenario pointer (read from the point's document) or a number:
 * `/strategy/tensor * /strategy/pipeline * 2`. */
struct SearchProduct {
  std::vector<std::variant<std::string, double>> terms;
  std::string text; ///< as written
};

/** How a constraint compares its two products. */
enum class Comparison { Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual, Divides };

/** `LEFT OP RIGHT`, e.g. `/strategy/tensor <= /cluster/gpus_per_node` or `/strategy/tensor * /strategy/pipeline
 * divides 64`. A point that breaks a constraint is excluded before it is validated. */
struct SearchConstraint {
  SearchProduct left;
  Comparison op = Comparison::LessEqual;
  SearchProduct right;
  std::string text;
  std::string source; ///< where it was written (a space file, `--constraint`) and at which pointer, for errors
  std::string at;
};

/** A value derived for each point after its axis values: a product (`/workload/global_batch=/strategy/data * 16`),
 * or `default`: the field is taken out so that the scenario's own default applies (`/strategy/data=default`: the GPU
 * count / (tensor x pipeline)). */
struct DerivedValue {
  std::string pointer;
  std::optional<SearchProduct> product; ///< empty: `default`
  std::string text;                     ///< as written, without the pointer
  std::string source;                   ///< where it was written (a space file, `--derive`) and at which pointer
  std::string at;
};

/** The space of a search. `source` and pointers name where each part came from, for errors. */
struct SearchSpace {
  std::vector<SweepAxis> axes; ///< the cartesian product of their values, first axis slowest
  std::vector<Override> sets;  ///< fixed values for every point
  std::vector<DerivedValue> derived;
  std::vector<SearchConstraint> constraints;
  std::vector<std::string> notes; ///< what the search decided on the user's behalf (an automatic derived value)
};

/** Parses `LEFT OP RIGHT` (`OP`: <, <=, >, >=, ==, !=, divides). @throws InputError(source, pointer, ...) */
SearchConstraint parse_constraint(const std::string& text, const std::string& source, const std::string& pointer);

/** Parses `/pointer=default` or `/pointer=PRODUCT`. @throws InputError(source, pointer, ...) */
DerivedValue parse_derived(const std::string& text, const std::string& source, const std::string& pointer);

/** Reads a space file: `{"axes": {POINTER: [values]}, "set": {POINTER: value}, "derived": {POINTER: "default" or
 * PRODUCT}, "constraints": [TEXT]}`, every key optional, no other key. @throws InputError naming the file and the
 * JSON pointer of a bad part. */
SearchSpace read_search_space(const std::filesystem::path& path);
SearchSpace parse_search_space(const nlohmann::json& document, const std::string& source);

/** Adds the parts of `more` (the command line) after those of `space` (the file). @throws InputError when a pointer
 * is derived and also an axis or a fixed value, or an axis twice. */
void merge_search_space(SearchSpace& space, const SearchSpace& more);

/** Derives `/strategy/data` (`default`) when the scenario gives it for a model-parallel split, the space varies the
 * split or the cluster's size, and nothing in the space gives the data degree: otherwise every point but one would be
 * refused for a product other than the GPU count. Says so in `space.notes`. */
void derive_data_degree(SearchSpace& space, const nlohmann::json& scenario);

/** The overrides that make a point: the space's fixed values, the point's axis values, then the derived values in
 * order (removals and products evaluated on the document so far, written as numbers). @throws InputError when a
 * product's pointer is not a number in the point's document. */
std::vector<Override> point_overrides(const nlohmann::json& scenario, const SearchSpace& space,
                                      const SweepPoint& point);

/** The index of the first constraint the point's document breaks, or nullopt. @throws InputError when a constraint's
 * pointer is not a number in the document. */
std::optional<std::size_t> broken_constraint(const SearchSpace& space, const nlohmann::json& document);

} // namespace partsim
