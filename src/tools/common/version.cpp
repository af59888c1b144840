// SPDX-License-Identifier: BSD-3-Clause
#include "common/version.hpp"

#include <cstdio>

#ifndef OPTIREDUCE_TOOLS_VERSION
#error "OPTIREDUCE_TOOLS_VERSION comes from src/tools/common/CMakeLists.txt (PROJECT_VERSION)"
#endif

namespace optireduce::tools {

const char *version() { return OPTIREDUCE_TOOLS_VERSION; }

void print_version(const char *tool) { std::printf("%s (optireduce) %s\n", tool, version()); }

}  // namespace optireduce::tools
