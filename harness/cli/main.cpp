// The `einfuzz` command line: one subcommand per file under harness/cli/.
#include <CLI/CLI.hpp>

#include <csignal>

#include <vector>

#include "subcommand.hpp"

int main(int argc, char** argv) {
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
