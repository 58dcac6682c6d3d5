#include <exception>
#include <iostream>
#include <new>
#include <string>

#include "cli/cli.h"
#include "cli/commands.h"
#include "cli/suggest.h"
#include "core/error.h"
#include "core/interrupt.h"

namespace maskprior::cli {

namespace {

/// A library's error message without the C++ backtrace LibTorch appends to its own ("Exception
/// raised from ...", "frame #0: ..."): the first lines say what went wrong, the frames only where.
std::string without_backtrace(std::string text) {
  for (const char* marker : {"\nException raised from", "\nframe #0"}) {
    const auto at = text.find(marker);
    if (at != std::string::npos) text.erase(at);
  }
  return text;
}

}  // namespace

int run_app(CLI::App& app, int argc, char** argv, const int& exit_code) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    print_usage_error(app, e);
    return kExitUsage;
  } catch (const SpecError& e) {
    std::cerr << e.what() << '\n';
    return kExitInputError;
  } catch (const InputError& e) {
    // An InputError may quote a LibTorch error (a rendezvous that timed out): its frames go too.
    std::cerr << "maskc: error: "
              << escape_control_chars(without_backtrace(e.what()), /*keep_newlines=*/true) << '\n';
    return kExitInputError;
  } catch (const Interrupted& e) {
    // A signal during a run's set-up: it ends the process as the signal would (130, 143).
    std::cerr << "maskc: " << escape_control_chars(e.what(), /*keep_newlines=*/true) << '\n';
    return 128 + e.signal();
  } catch (const InternalError& e) {
    std::cerr << "maskc: " << e.what() << " (this is a bug in maskprior)\n";
    return kExitInternal;
  } catch (const std::bad_alloc&) {
    // Buffers sized by the input say how much they wanted (allocate_or_throw); this is the rest.
    std::cerr << "maskc: error: out of memory: this command needs more memory than is available "
                 "(a smaller spec, -D size, model or data file would fit)\n";
    return kExitInputError;
  } catch (const std::exception& e) {
    std::cerr << "maskc: error: "
              << escape_control_chars(without_backtrace(e.what()), /*keep_newlines=*/true) << '\n';
    return kExitInputError;
  }
  return exit_code;
}

}  // namespace maskprior::cli
