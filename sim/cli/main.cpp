// partsim: the command-line front end. Parses the command line and dispatches; the work lives in partsim_core.
#include "commands.hpp"

#include "partsim/error.hpp"
#include "partsim/exit_codes.hpp"
#include "partsim/output_file.hpp"
#include "partsim/report_writers.hpp"
#include "partsim/text.hpp"

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
    std::cerr << "partsim: error: " << partsim::printable(e.what()) << " (see partsim --help)\n";
    return partsim::kExitInputError;
  }
  // Every way out flushes and ends without exit handlers: they would tear down SimGrid's platform host by host and
  // link by link (0.4 s at 16,384 GPUs), or a simulation stopped midway with its actors still alive.
  auto leave = [](int code) {
    std::cerr.flush();
    std::fflush(nullptr);
    std::_Exit(code);
  };
  auto say = [](const char* what) { std::cerr << "partsim: error: " << partsim::printable(what) << '\n'; };
  try {
    for (auto& [command, action] : commands)
      if (command->parsed()) {
        const int code = action();
        partsim::write_stdout(""); // what was printed reached its destination (a full disk, a closed pipe)
        leave(code);
      }
  } catch (const partsim::InputError& e) {
    say(e.what());
    leave(partsim::kExitInputError);
  } catch (const partsim::OutputError& e) {
    say(e.what());
    leave(partsim::kExitOutputError);
  } catch (const std::bad_alloc&) {
    say("out of host memory (std::bad_alloc); this run needs more memory than this machine has");
    leave(partsim::kExitFailure);
  } catch (const std::exception& e) {
    say(e.what());
    leave(partsim::kExitFailure);
  }
  return 0;
}
