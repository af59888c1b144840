// SPDX-License-Identifier: BSD-3-Clause
// The same report as one JSON object, for scripts that record the environment of a run.
#include "common/json_writer.hpp"
#include "render.hpp"

namespace optireduce::info {
namespace {

using tools::JsonWriter;

void optional_field(JsonWriter &j, const char *key, const std::optional<std::string> &v) {
    if (v)
        j.field(key, *v);
    else
        j.null_field(key);
}

void library_section(JsonWriter &j, const LibraryFacts &l) {
    j.begin_object("library");
    j.field("version", l.version);
    j.field("mpi_abi", l.mpi_abi);
    j.field("path", l.path);
    j.field("codec_kernels", l.codec_kernels);
    optional_field(j, "mpich_path", l.mpich_path);
    j.end_object();
}

void choices_array(JsonWriter &j, const char *name, const std::vector<ProviderChoice> &list) {
    j.begin_array(name);
    for (const auto &c : list) {
        j.begin_object();
        j.field("when", c.when);
        j.field("provider", c.provider);
        j.field("usable", c.usable);
        if (!c.why.empty()) j.field("why", c.why);
        j.end_object();
    }
    j.end_array();
}

void fabric_section(JsonWriter &j, const FabricFacts &f) {
    j.begin_object("libfabric");
    j.field("version", f.runtime_version);
    j.field("header_version", f.header_version);
    optional_field(j, "fi_provider", f.fi_provider);
    if (!f.error.empty()) j.field("error", f.error);
    j.begin_array("providers");
    for (const auto &p : f.providers) {
        j.begin_object();
        j.field("name", p.name);
        j.field("ep_type", p.ep_type);
        j.field("max_msg_size", p.max_msg_size);
        j.end_object();
    }
    j.end_array();
    j.field("optireduce_provider", f.knob);
    choices_array(j, "engine_choice", f.choices);
    j.field("optireduce_dgram_provider", f.dgram_knob);
    choices_array(j, "bounded_choice", f.bounded_choices);
    j.end_object();
}

void kernel_section(JsonWriter &j, const KernelChannelFacts &k) {
    j.begin_object("kernel_channel");
    if (!k.error.empty()) j.field("error", k.error);
    j.field("gso", k.gso);
    j.field("gro", k.gro);
    j.field("receive_buffer", static_cast<std::uint64_t>(k.rcvbuf));
    j.begin_array("interfaces");
    for (const auto &i : k.interfaces) {
        j.begin_object();
        j.field("name", i.name);
        j.field("address", i.address);
        j.field("mtu", static_cast<std::uint64_t>(i.mtu));
        j.field("datagram", static_cast<std::uint64_t>(i.datagram));
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

void topology_section(JsonWriter &j, const TopologyFacts &t) {
    j.begin_object("topology");
    j.field("hwloc_version", t.hwloc_version);
    if (!t.error.empty()) j.field("error", t.error);
    j.field("packages", t.packages);
    j.field("cores", t.cores);
    j.field("pus", t.pus);
    j.field("numa_nodes", t.numa_nodes);
    j.begin_array("net_devices");
    for (const auto &d : t.net_devices) {
        j.begin_object();
        j.field("name", d.name);
        j.field("kind", d.kind);
        j.field("pci", d.pci);
        j.field("numa", d.numa);
        j.field("cpuset", d.cpuset);
        j.end_object();
    }
    j.end_array();
    j.end_object();
}

void configuration_section(JsonWriter &j, const ConfigFacts &c) {
    j.begin_object("configuration");
    for (const auto &v : c.values) {
        j.begin_object(v.spec->name);
        j.field("value", v.text);
        j.field("source", v.source == Source::environment ? "environment" : "default");
        j.end_object();
    }
    j.end_object();
    j.begin_array("unknown_variables");
    for (const auto &u : c.unknown) j.value(u);
    j.end_array();
}

}  // namespace

void render_json(const Report &r, std::ostream &os) {
    JsonWriter j(os);
    j.begin_object();
    library_section(j, r.library);
    fabric_section(j, r.fabric);
    kernel_section(j, r.kernel);
    topology_section(j, r.topology);
    configuration_section(j, r.config);
    j.end_object();
}

}  // namespace optireduce::info
