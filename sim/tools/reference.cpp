// partsim_reference: regenerates the field tables of docs/scenario-reference.md from the scenario schema
// (`partsim_reference FILE`), or checks that they are current (`partsim_reference --check FILE`, exit 1 if not).
#include "partsim/common/error.hpp"
#include "partsim/common/exit_codes.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/scenario_schema.hpp"

#include <iostream>
#include <string>

int main(int argc, char** argv) {
  const bool check = argc == 3 && std::string(argv[1]) == "--check";
  if (argc != 2 && !check) {
    std::cerr << "usage: partsim_reference [--check] docs/scenario-reference.md\n";
    return partsim::kExitInputError;
  }
  const std::string path = argv[argc - 1];
  try {
    const std::string text = partsim::read_text_file(path, 16u << 20, "reference");
    const std::string updated = partsim::update_schema_tables(text, path);
    if (check) {
      if (updated == text) return 0;
      std::cerr << "partsim_reference: " << path
                << " is not current with the scenario schema (sim/src/input/scenario_schema.cpp); regenerate it with "
                   "build/sim/partsim_reference "
                << path << "\n";
      return 1;
    }
    if (updated != text) partsim::write_file_atomically(path, updated);
    return 0;
  } catch (const partsim::InputError& e) {
    std::cerr << "partsim_reference: error: " << e.what() << "\n";
    return partsim::kExitInputError;
  } catch (const partsim::OutputError& e) {
    std::cerr << "partsim_reference: error: " << e.what() << "\n";
    return partsim::kExitOutputError;
  }
}
