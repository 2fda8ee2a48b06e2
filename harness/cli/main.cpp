// The `einfuzz` command line: one subcommand per file under harness/cli/.
#include <CLI/CLI.hpp>

#include <csignal>

#include <string>
#include <string_view>
#include <vector>

#include "einfuzz/core/text.hpp"

#include "subcommand.hpp"

namespace einfuzz::cli {
namespace {
std::string spelling = "einfuzz";
}  // namespace

const std::string& cli_spelling() { return spelling; }

void set_cli_spelling(const char* argv0) {
  const std::string_view typed = argv0 != nullptr ? argv0 : "";
  if (typed.empty()) return;
  // Characters a shell neither splits on nor expands, as a path would usually hold them.
  const bool plain = typed.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                             "0123456789_./+-,:=@%") == std::string_view::npos;
  spelling = plain ? std::string(typed) : shell_quote(typed);
}
}  // namespace einfuzz::cli

int main(int argc, char** argv) {
  einfuzz::cli::set_cli_spelling(argc > 0 ? argv[0] : nullptr);
  // Past RLIMIT_FSIZE a write must fail with EFBIG (reported as an I/O error), not kill the process.
  std::signal(SIGXFSZ, SIG_IGN);
  CLI::App app{"einfuzz — differential verification and fuzz testing of einsum contractions and reductions"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "einfuzz 0.1.0");

  const std::vector<einfuzz::cli::Subcommand> subcommands = {
      einfuzz::cli::add_check(app),
      einfuzz::cli::add_fuzz(app),
      einfuzz::cli::add_shrink(app),
      einfuzz::cli::add_replay(app),
      einfuzz::cli::add_backends(app),
      einfuzz::cli::add_repro(app),
      einfuzz::cli::add_merge(app),
      einfuzz::cli::add_profile(app),
  };

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;  // bad usage is bad input
  }
  for (const auto& s : subcommands) {
    if (s.app->parsed()) return s.run();
  }
  return 2;
}
