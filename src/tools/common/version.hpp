// SPDX-License-Identifier: BSD-3-Clause
// --version, the same on every tool: "TOOL (optireduce) VERSION", in the GNU form. The version is
// CMake's PROJECT_VERSION, handed to version.cpp alone as a compile definition.
#pragma once

namespace optireduce::tools {

// The project's version, "0.1.0".
const char *version();

// Prints the --version line for `tool` on stdout.
void print_version(const char *tool);

}  // namespace optireduce::tools
