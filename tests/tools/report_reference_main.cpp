// Prints docs/report-reference.md, generated from the report's field tables:
//   build/tests/partsim_report_reference > docs/report-reference.md
#include "partsim/report/report_document.hpp"

#include <iostream>

int main() {
  std::cout << partsim::report_reference_markdown();
  return std::cout.good() ? 0 : 1;
}
