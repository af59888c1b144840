// SPDX-License-Identifier: BSD-3-Clause
// optireduce-info: what optireduce would do on this host, without starting MPI.
// Prints the library build, libfabric providers, the hwloc topology and the effective
// OPTIREDUCE_* configuration; exits 1 when the configuration is invalid, like the library would
// refuse it at MPI_Init.
#include <cstring>
#include <iostream>

#include "common/version.hpp"
#include "config/config.hpp"
#include "probes.hpp"
#include "render.hpp"

namespace {

constexpr const char *kUsage =
    "usage: optireduce-info [--json | --config-markdown | --help | --version]\n"
    "\n"
    "Reports the optireduce library build and MPI ABI, the libfabric providers usable on this\n"
    "host and the one the engine picks, the hwloc topology with network device locality, and\n"
    "every OPTIREDUCE_* setting with its value and source. Does not initialise MPI.\n"
    "\n"
    "  --json             the same report as one JSON object\n"
    "  --config-markdown  the configuration reference table (docs/configuration.md)\n"
    "  --help             this text\n"
    "  --version          the tool's version, one line\n"
    "\n"
    "Exit status:\n"
    "  0  the report was printed (or --help, --version, --config-markdown)\n"
    "  1  an OPTIREDUCE_* variable has an invalid value (the library would refuse it at MPI_Init)\n"
    "  2  bad usage (an unknown option)\n";

enum class Output { text, json, config_markdown };

}  // namespace

int main(int argc, char **argv) {
    using namespace optireduce;
    Output output = Output::text;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--json") == 0) {
            output = Output::json;
        } else if (std::strcmp(argv[i], "--config-markdown") == 0) {
            output = Output::config_markdown;
        } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) {
            std::cout << kUsage;
            return 0;
        } else if (std::strcmp(argv[i], "--version") == 0) {
            tools::print_version("optireduce-info");
            return 0;
        } else {
            std::cerr << "optireduce-info: unknown option '" << argv[i] << "'\n" << kUsage;
            return 2;
        }
    }

    // The reference table is a property of the build, not of this environment.
    if (output == Output::config_markdown) {
        std::cout << configuration_markdown();
        return 0;
    }

    ParseResult parsed = parse_environment();
    if (parsed.error) {
        std::cerr << "optireduce-info: error: " << parsed.error->message << "\n";
        return 1;
    }
    for (const auto &name : parsed.unknown)
        std::cerr << "optireduce-info: warning: " << name
                  << " is set but is not an optireduce variable (typo?); it is ignored\n";

    info::Report report;
    report.config = {parsed.config->values, parsed.unknown};
    report.library = info::probe_library();
    report.fabric = info::probe_fabric(parsed.config->provider, parsed.config->dgram_provider);
    report.kernel = info::probe_kernel_channel(*parsed.config);
    report.topology = info::probe_topology();

    if (output == Output::json)
        info::render_json(report, std::cout);
    else
        info::render_text(report, std::cout);
    return 0;
}
