// SPDX-License-Identifier: BSD-3-Clause
// The four things optireduce-info looks at, one probe each. None of them initialises MPI: the
// tool must work on a login node, outside any job, and before a launcher is involved.
#pragma once

#include "report.hpp"

namespace optireduce::info {

LibraryFacts probe_library();

// `provider_knob` and `dgram_knob` are OPTIREDUCE_PROVIDER and OPTIREDUCE_DGRAM_PROVIDER as
// parsed, so the tool shows the providers the engine would really ask for.
FabricFacts probe_fabric(const std::string &provider_knob, const std::string &dgram_knob);

// The kernel UDP channel, opened as the engine would with these settings, then closed.
KernelChannelFacts probe_kernel_channel(const Config &config);

TopologyFacts probe_topology();

}  // namespace optireduce::info
