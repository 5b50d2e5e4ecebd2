// partsim: the command-line front end. Parses the command line and dispatches; the work lives in partsim_core.
#include "commands.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/event_stream.hpp"
#include "partsim/common/exit_codes.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/common/text.hpp"
#include "partsim/report/report_writers.hpp"

#include <cstdio>
#include <cstdlib>
#include <iostream>

int main(int argc, char** argv) {
  CLI::App app{"partsim: simulate AI work split across many GPUs, on SimGrid"};
  app.set_version_flag("--version", "partsim " + partsim::partsim_version());
  app.require_subcommand(1);
  // Options of the app may follow the subcommand: `partsim run S --error-format=json`.
  app.fallthrough();
  std::string error_format = "text";
  app.add_option("--error-format", error_format,
                 "Errors on stderr as text lines, or as JSON lines for a program that runs partsim")
      ->check(CLI::IsMember({"text", "json"}));
  std::vector<std::pair<CLI::App*, partsim::cli::Action>> commands;
  for (auto add : {partsim::cli::add_run_command, partsim::cli::add_sweep_command, partsim::cli::add_search_command,
                   partsim::cli::add_merge_command, partsim::cli::add_validate_command, partsim::cli::add_list_command,
                   partsim::cli::add_validation_command, partsim::cli::add_batch_command,
                   partsim::cli::add_plan_replicas_command}) {
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
  // One line, in the format asked for; `source` and `pointer` are those of an InputError (empty otherwise).
  auto say = [&error_format](int code, const std::string& what, const std::string& source, const std::string& pointer) {
    if (error_format == "json")
      std::cerr << partsim::error_line(code, source, pointer, partsim::printable(what));
    else
      std::cerr << "partsim: error: " << partsim::printable(what) << '\n';
  };
  try {
    for (auto& [command, action] : commands)
      if (command->parsed()) {
        const int code = action();
        partsim::write_stdout(""); // what was printed reached its destination (a full disk, a closed pipe)
        leave(code);
      }
  } catch (const partsim::cli::CommandFailed& failed) {
    for (const partsim::cli::CommandError& e : failed.errors) say(failed.exit_code, e.message, e.source, e.pointer);
    leave(failed.exit_code);
  } catch (const partsim::InputError& e) {
    say(partsim::kExitInputError, e.what(), e.source(), e.pointer());
    leave(partsim::kExitInputError);
  } catch (const partsim::OutputError& e) {
    say(partsim::kExitOutputError, e.what(), "", "");
    leave(partsim::kExitOutputError);
  } catch (const std::bad_alloc&) {
    say(partsim::kExitFailure, "out of host memory (std::bad_alloc); this run needs more memory than this machine has",
        "", "");
    leave(partsim::kExitFailure);
  } catch (const std::exception& e) {
    say(partsim::kExitFailure, e.what(), "", "");
    leave(partsim::kExitFailure);
  }
  return 0;
}
