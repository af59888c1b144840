// SPDX-License-Identifier: BSD-3-Clause
// Which libfabric provider a communicator asks for: the reliable one of exact mode
// (OPTIREDUCE_PROVIDER, rdm_provider_for) and the datagram one of bounded mode
// (OPTIREDUCE_DGRAM_PROVIDER, dgram_provider_for). The engine (comm_setup.cpp) and
// optireduce-info (fabric_probe.cpp) call these with the knob as the configuration normalised
// it, whether every rank of the communicator is on this node, and, for datagrams, the
// kernel-bypass provider this host offers (hardware_dgram_provider(): "efa", "verbs" or "").
#include "transport/fabric/provider_choice.hpp"

#include "config/config.hpp"
#include "fake_env.hpp"

#include <gtest/gtest.h>

#include <string>

namespace optireduce {
namespace {

constexpr bool kOneNode = true;
constexpr bool kSeveralNodes = false;

// ---- rdm_provider_for: the reliable channel (exact mode, and bounded mode on one node) ----

TEST(RdmProviderChoice, AutoOnOneNodeIsShm) { EXPECT_EQ(rdm_provider_for("auto", kOneNode), "shm"); }

TEST(RdmProviderChoice, AutoAcrossNodesIsTcpWithRxm) {
    EXPECT_EQ(rdm_provider_for("auto", kSeveralNodes), "tcp;ofi_rxm");
}

// An empty knob means "default", which is auto.
TEST(RdmProviderChoice, EmptyKnobActsAsAuto) {
    EXPECT_EQ(rdm_provider_for("", kOneNode), "shm");
    EXPECT_EQ(rdm_provider_for("", kSeveralNodes), "tcp;ofi_rxm");
}

// Plain tcp is MSG-only in libfabric 1.17: "tcp" means tcp layered under ofi_rxm, wherever the
// ranks are (a user who names tcp gets tcp even on one node, not shm).
TEST(RdmProviderChoice, TcpIsShorthandForTcpWithRxm) {
    EXPECT_EQ(rdm_provider_for("tcp", kOneNode), "tcp;ofi_rxm");
    EXPECT_EQ(rdm_provider_for("tcp", kSeveralNodes), "tcp;ofi_rxm");
}

TEST(RdmProviderChoice, UdpIsShorthandForUdpWithRxd) {
    EXPECT_EQ(rdm_provider_for("udp", kOneNode), "udp;ofi_rxd");
    EXPECT_EQ(rdm_provider_for("udp", kSeveralNodes), "udp;ofi_rxd");
}

// Any other name goes to libfabric as given, whatever the node layout: no shm substitution on
// one node, no rxm added across nodes, no check that the provider exists (setup fails then).
TEST(RdmProviderChoice, OtherNamesPassThroughUnchanged) {
    for (bool one_node : {kOneNode, kSeveralNodes}) {
        SCOPED_TRACE(one_node ? "one node" : "several nodes");
        EXPECT_EQ(rdm_provider_for("shm", one_node), "shm");
        EXPECT_EQ(rdm_provider_for("tcp;ofi_rxm", one_node), "tcp;ofi_rxm");
        EXPECT_EQ(rdm_provider_for("verbs;ofi_rxm", one_node), "verbs;ofi_rxm");
        EXPECT_EQ(rdm_provider_for("efa", one_node), "efa");
        EXPECT_EQ(rdm_provider_for("no_such_provider", one_node), "no_such_provider");
    }
}

// ---- dgram_provider_for: the datagram channel of bounded mode ("" = use the reliable one) ----

// On one node auto means the reliable channel (shm): nothing to lose between the ranks. This
// holds even where the host has kernel-bypass hardware (optireduce-info passes it for both
// layouts; the engine passes "" on one node).
TEST(DgramProviderChoice, AutoOnOneNodeUsesTheReliableChannel) {
    EXPECT_EQ(dgram_provider_for("auto", kOneNode, ""), "");
    EXPECT_EQ(dgram_provider_for("auto", kOneNode, "efa"), "");
    EXPECT_EQ(dgram_provider_for("auto", kOneNode, "verbs"), "");
}

TEST(DgramProviderChoice, AutoAcrossNodesPrefersEfa) {
    EXPECT_EQ(dgram_provider_for("auto", kSeveralNodes, "efa"), "efa");
}

TEST(DgramProviderChoice, AutoAcrossNodesTakesVerbsWhereThatIsTheHardware) {
    EXPECT_EQ(dgram_provider_for("auto", kSeveralNodes, "verbs"), "verbs");
}

// No kernel-bypass provider: the library's own kernel UDP channel.
TEST(DgramProviderChoice, AutoAcrossNodesWithoutHardwareFallsBackToKernel) {
    EXPECT_EQ(dgram_provider_for("auto", kSeveralNodes, ""), "kernel");
}

TEST(DgramProviderChoice, EmptyKnobActsAsAuto) {
    EXPECT_EQ(dgram_provider_for("", kOneNode, "efa"), "");
    EXPECT_EQ(dgram_provider_for("", kSeveralNodes, "efa"), "efa");
    EXPECT_EQ(dgram_provider_for("", kSeveralNodes, "verbs"), "verbs");
    EXPECT_EQ(dgram_provider_for("", kSeveralNodes, ""), "kernel");
}

// A name the user gives is used as given on any layout, even on one node (where auto would
// take the reliable channel) and whatever hardware the host has; unlike the reliable knob,
// "udp" is not rewritten (udp is a datagram provider itself).
TEST(DgramProviderChoice, UserNamesWinOverLayoutAndHardware) {
    for (bool one_node : {kOneNode, kSeveralNodes}) {
        for (const char *hardware : {"", "efa", "verbs"}) {
            SCOPED_TRACE(std::string(one_node ? "one node" : "several nodes") + ", hardware '" + hardware + "'");
            EXPECT_EQ(dgram_provider_for("kernel", one_node, hardware), "kernel");
            EXPECT_EQ(dgram_provider_for("udp", one_node, hardware), "udp");
            EXPECT_EQ(dgram_provider_for("efa", one_node, hardware), "efa");
            EXPECT_EQ(dgram_provider_for("verbs", one_node, hardware), "verbs");
            EXPECT_EQ(dgram_provider_for("no_such_provider", one_node, hardware), "no_such_provider");
        }
    }
}

// ---- from the environment variable to the provider, as the engine does it ----

// The engine passes Config::provider / Config::dgram_provider: identifiers are lower-cased and
// an unset or empty variable becomes "auto", so spellings users write reach the same branch.
TEST(ProviderChoiceFromConfig, KnobsAreNormalisedBeforeTheChoice) {
    using testing_support::FakeEnv;
    using testing_support::parsed;

    const Config defaults = parsed(FakeEnv{});
    EXPECT_EQ(rdm_provider_for(defaults.provider, kOneNode), "shm");
    EXPECT_EQ(rdm_provider_for(defaults.provider, kSeveralNodes), "tcp;ofi_rxm");
    EXPECT_EQ(dgram_provider_for(defaults.dgram_provider, kSeveralNodes, ""), "kernel");

    const Config empty = parsed(FakeEnv{{"OPTIREDUCE_PROVIDER", ""}, {"OPTIREDUCE_DGRAM_PROVIDER", ""}});
    EXPECT_EQ(rdm_provider_for(empty.provider, kSeveralNodes), "tcp;ofi_rxm");
    EXPECT_EQ(dgram_provider_for(empty.dgram_provider, kSeveralNodes, "efa"), "efa");

    const Config upper = parsed(FakeEnv{{"OPTIREDUCE_PROVIDER", "TCP"}, {"OPTIREDUCE_DGRAM_PROVIDER", "Auto"}});
    EXPECT_EQ(rdm_provider_for(upper.provider, kOneNode), "tcp;ofi_rxm");
    EXPECT_EQ(dgram_provider_for(upper.dgram_provider, kOneNode, "verbs"), "");
    EXPECT_EQ(dgram_provider_for(upper.dgram_provider, kSeveralNodes, "verbs"), "verbs");
}

// ---- hardware_dgram_provider: what this host offers (not pure: asks libfabric once) ----

// Which answer depends on the host; it is always one of the names dgram_provider_for expects,
// and the same object every time (the probe runs once per process).
TEST(HardwareDgramProvider, IsEfaVerbsOrNoneAndAskedOnce) {
    const std::string &first = hardware_dgram_provider();
    EXPECT_TRUE(first.empty() || first == "efa" || first == "verbs") << "'" << first << "'";
    EXPECT_EQ(&hardware_dgram_provider(), &first);
}

}  // namespace
}  // namespace optireduce
