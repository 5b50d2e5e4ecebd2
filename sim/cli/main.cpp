// partsim: the command-line front end. Parses the command line and dispatches; the work lives in partsim_core.
#include "commands.hpp"

#include "partsim/error.hpp"
#include "partsim/report_writers.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"partsim: simulate AI work split across many GPUs, on SimGrid"};
  app.set_version_flag("--version", "partsim " + partsim::partsim_version());
  app.require_subcommand(1);
  std::vector<std::pair<CLI::App*, partsim::cli::Action>> commands;
  for (auto add : {partsim::cli::add_run_command, partsim::cli::add_sweep_command, partsim::cli::add_validate_command,
                   partsim::cli::add_list_command}) {
    auto action = add(app);
    commands.emplace_back(app.get_subcommands({}).back(), std::move(action));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "partsim: error: " << e.what() << " (see partsim --help)\n";
    return 2;
  }
  try {
    for (auto& [command, action] : commands)
      if (command->parsed()) {
        const int code = action();
        // Everything is written: end without running exit handlers, which would tear down SimGrid's platform host by
        // host and link by link (0.4 s at 16,384 GPUs) and free every rank's program.
        std::cout.flush();
        std::cerr.flush();
        std::fflush(nullptr);
        std::_Exit(code);
      }
  } catch (const partsim::InputError& e) {
    std::cerr << "partsim: error: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "partsim: error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
