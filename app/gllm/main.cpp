// Entry point of `gllm`, the headless CLI: sets up threads, installs every registered subcommand,
// and turns any engine error into a message and a non-zero exit (2: bad input, 3: a bug).
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <new>
#include <nlohmann/json.hpp>

#include "app/gllm/command_registry.h"
#include "engine/io/error.h"
#include "engine/io/json_read.h"
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
    // CLI11 prints the option's problem; --help and --version end here with 0, every bad
    // option or value with the same 2 as any other bad input.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const gllm::cli::ExitStatus& e) {
    if (!e.message.empty()) std::cerr << "gllm: " << e.message << std::endl;
    return e.code;
  } catch (const gllm::Error& e) {
    std::cerr << "gllm: error: " << e.what() << std::endl;
    return 2;
  } catch (const nlohmann::json::exception& e) {
    // A reader that met JSON of an unexpected shape: bad input, reported as such.
    std::cerr << "gllm: error: a JSON file or value has an unexpected shape ("
              << gllm::brief_text(e.what(), 300)
              << "); check the files this command reads (configs, sweeps, run folders)"
              << std::endl;
    return 2;
  } catch (const std::filesystem::filesystem_error& e) {
    std::cerr << "gllm: error: " << gllm::brief_text(e.what(), 400)
              << " (check the path and its permissions)" << std::endl;
    return 2;
  } catch (const std::bad_alloc&) {
    std::cerr << "gllm: error: out of memory; the request is too large for this machine — "
                 "use smaller sizes"
              << std::endl;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "gllm: unexpected error: " << e.what()
              << "\n(please report this with the command you ran)" << std::endl;
    return 3;
  }
  return 0;
}
