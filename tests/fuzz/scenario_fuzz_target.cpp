// The fuzz target of the front door: bytes -> JSON -> scenario -> plan, as `partsim validate` does. Whatever the bytes,
// the only way out is an InputError: an internal check (abort), a SimGrid-free crash, another exception or a
// sanitizer report is a bug. Built as a libFuzzer target (clang, the `fuzz` preset) and, with replay_main.cpp, as a
// replay of the regression inputs in every build.
#include "partsim/common/error.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/scenario.hpp"
#include "partsim/plan/strategy.hpp"

#include <cstddef>
#include <cstdint>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const nlohmann::json document = partsim::parse_json_text(text, "fuzz.json");
    if (!document.is_object()) return 0;
    const partsim::Scenario scenario = partsim::parse_scenario(document, "fuzz.json", PARTSIM_FUZZ_DATA_DIR);
    const partsim::Plan plan = partsim::build_plan(scenario);
    static_cast<void>(plan);
  } catch (const partsim::InputError& e) {
    // The one expected way out; its message must be one printable line.
    const std::string what = e.what();
    for (const char c : what)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7F) __builtin_trap();
  }
  return 0;
}
