// SPDX-License-Identifier: BSD-3-Clause
// What optireduce-info found out, as plain values: the probes fill it, the renderers print it,
// so text and JSON output can never disagree about a fact.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace optireduce::info {

struct LibraryFacts {
    std::string version;                    // optireduce_version() of the linked library
    std::string mpi_abi;                    // optireduce_mpi_abi(): "Open MPI" or "MPICH"
    std::string path;                       // where the dynamic loader found liboptireduce.so
    std::optional<std::string> mpich_path;  // liboptireduce-mpich.so in the same directory
    std::string codec_kernels;              // instruction set of the transform and estimator kernels
};

struct ProviderRow {
    std::string name;     // prov_name, e.g. "tcp;ofi_rxm"
    std::string ep_type;  // "RDM" or "DGRAM"
    std::uint64_t max_msg_size = 0;
};

// One provider the engine may ask for, and whether fi_getinfo offers it on this host.
struct ProviderChoice {
    std::string when;      // the situation it is picked in
    std::string provider;  // rdm_provider_for()'s answer
    bool usable = false;
    std::string why;  // the reason for the choice, where there is one to give
};

struct FabricFacts {
    std::string runtime_version;             // fi_version() of the loaded libfabric
    std::string header_version;              // the headers optireduce-info was compiled with
    std::optional<std::string> fi_provider;  // FI_PROVIDER, which filters everything below
    std::vector<ProviderRow> providers;      // unique (name, ep type), RDM first
    std::string knob;                        // OPTIREDUCE_PROVIDER as parsed
    std::vector<ProviderChoice> choices;     // exact mode's
    std::string dgram_knob;                  // OPTIREDUCE_DGRAM_PROVIDER as parsed
    std::vector<ProviderChoice> bounded_choices;
    std::string error;  // why fi_getinfo failed, other than "no provider matches"
};

// The kernel UDP channel (OPTIREDUCE_DGRAM_PROVIDER=kernel, auto without kernel bypass) as it
// would open here: what it publishes, each interface's MTU and the datagram it allows, and
// which offloads the kernel grants a socket.
struct KernelInterface {
    std::string name, address;
    std::size_t mtu = 0;       // of the interface; 0: unknown
    std::size_t datagram = 0;  // what the channel would send through it
};
struct KernelChannelFacts {
    std::vector<KernelInterface> interfaces;
    std::string gso, gro;  // "on", or why not
    int rcvbuf = 0;        // what the kernel grants the channel's request, bytes
    std::string error;     // why the channel could not open here
};

struct NetDevice {
    std::string name;    // OS name: eth0, ib0, mlx5_0
    std::string kind;    // "network" or "openfabrics"
    std::string pci;     // bus id, empty when not behind a PCI device
    std::string numa;    // nearest NUMA node(s), hwloc list syntax ("0", "0-1")
    std::string cpuset;  // PUs local to it, list syntax
};

struct TopologyFacts {
    std::string hwloc_version;
    int packages = 0, cores = 0, pus = 0, numa_nodes = 0;
    std::vector<NetDevice> net_devices;
    std::string error;  // why the topology could not be loaded
};

struct ConfigFacts {
    std::vector<KnobValue> values;     // every knob with value and source
    std::vector<std::string> unknown;  // OPTIREDUCE_* variables that are no knob (typos)
};

struct Report {
    LibraryFacts library;
    FabricFacts fabric;
    KernelChannelFacts kernel;
    TopologyFacts topology;
    ConfigFacts config;
};

}  // namespace optireduce::info
