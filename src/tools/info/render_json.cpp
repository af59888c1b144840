// The same report as one JSON object, for scripts that record the environment of a run.
#include "json_writer.hpp"
#include "render.hpp"

namespace optireduce::info {

void render_json(const Report &r, std::ostream &os) {
    JsonWriter j(os);
    j.begin_object();

    j.begin_object("library");
    j.field("version", r.library.version);
    j.field("mpi_abi", r.library.mpi_abi);
    j.field("path", r.library.path);
    j.field("codec_kernels", r.library.codec_kernels);
    if (r.library.mpich_path) j.field("mpich_path", *r.library.mpich_path);
    else j.null_field("mpich_path");
    j.end_object();

    const auto &f = r.fabric;
    j.begin_object("libfabric");
    j.field("version", f.runtime_version);
    j.field("header_version", f.header_version);
    if (f.fi_provider) j.field("fi_provider", *f.fi_provider);
    else j.null_field("fi_provider");
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
    auto choices = [&j](const char *name, const std::vector<ProviderChoice> &list) {
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
    };
    choices("engine_choice", f.choices);
    j.field("optireduce_dgram_provider", f.dgram_knob);
    choices("bounded_choice", f.bounded_choices);
    j.end_object();

    const auto &k = r.kernel;
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

    const auto &t = r.topology;
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

    j.begin_object("configuration");
    for (const auto &v : r.config.values) {
        j.begin_object(v.spec->name);
        j.field("value", v.text);
        j.field("source", v.source == Source::environment ? "environment" : "default");
        j.end_object();
    }
    j.end_object();
    j.begin_array("unknown_variables");
    for (const auto &u : r.config.unknown) j.value(u);
    j.end_array();

    j.end_object();
}

}  // namespace optireduce::info
