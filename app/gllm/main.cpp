// Entry point of `gllm`, the headless CLI: sets up threads, installs every registered subcommand,
// and turns any engine error into a message and a non-zero exit.
#include <cstdio>
#include <iostream>

#include "app/gllm/command_registry.h"
#include "engine/io/error.h"
#include "engine/runtime/runtime.h"

int main(int argc, char** argv) {
  gllm::configure_allocator();  // before any thread takes an allocator arena
  CLI::App app{"gllm — graded language-model research workbench (headless CLI)"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("gllm ") + GLLM_VERSION);
  gllm::cli::install_all(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  } catch (const gllm::Error& e) {
    std::cerr << "gllm: error: " << e.what() << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gllm: unexpected error: " << e.what()
              << "\n(please report this with the command you ran)" << std::endl;
    return 3;
  }
  return 0;
}
