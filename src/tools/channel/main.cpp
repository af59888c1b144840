// SPDX-License-Identifier: BSD-3-Clause
// optireduce-channel-bench: how fast, and at what CPU cost, each datagram channel of bounded
// mode moves bulk data from one process to another, next to a TCP stream of the same bytes, in
// the manner of libfabric's fabtests: two processes, a control connection, one table.
//
// This file is the command line and the two roles; control.cpp is the link between them,
// dgram.cpp and stream.cpp measure one channel, report.cpp prints the results.
#include "common/cli_numbers.hpp"
#include "common/version.hpp"
#include "measure.hpp"
#include "report.hpp"

#include <arpa/inet.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

namespace {

using optireduce::Fd;
using namespace optireduce::channel_bench;

constexpr const char *kUsage =
    "usage: optireduce-channel-bench --server [--port P]\n"
    "       optireduce-channel-bench --client HOST[:P] [OPTIONS]\n"
    "       optireduce-channel-bench --loopback [--port P] [OPTIONS]\n"
    "       optireduce-channel-bench --help | --version\n"
    "\n"
    "Throughput and CPU cost of sending bulk data from the client to the server over each\n"
    "datagram channel of bounded mode, and over a TCP stream of the same bytes for reference.\n"
    "The two sides meet on a TCP control port and may run in different network namespaces\n"
    "(ip netns exec ...). The client prints one table.\n"
    "\n"
    "  --server            wait on TCP port P for one client, serve its runs, then exit\n"
    "  --client HOST[:P]   run against the server at HOST (an IPv4 address or a name)\n"
    "  --loopback          start a server in a child process and run against it on 127.0.0.1\n"
    "  --port P            the server's control port (default 18515; --loopback: a free one)\n"
    "\n"
    "OPTIONS (the client's; the server follows them):\n"
    "  --channels LIST     comma-separated, in this order by default (all of them):\n"
    "                        kernel      kernel UDP channel, segmentation (GSO) and coalescing (GRO)\n"
    "                        kernel-gso  kernel UDP channel, GSO only\n"
    "                        kernel-gro  kernel UDP channel, GRO only\n"
    "                        kernel-off  kernel UDP channel, neither\n"
    "                        udp         libfabric's udp datagram provider\n"
    "                        tcp         one TCP connection (the reference)\n"
    "  --bytes N           payload per channel; K, M, G suffixes are powers of 1024 (default 1G)\n"
    "  --mtu N             kernel channel: cap the MTU at N (576..9000; 0, the default: the\n"
    "                      path MTU, which gives 8972-byte datagrams on loopback)\n"
    "  --json              one JSON object per channel on stdout; the table goes to stderr\n"
    "  --help              this text\n"
    "  --version           the tool's version, one line\n"
    "\n"
    "Exit status:\n"
    "  0  every channel ran (the server: it served its client to the end; or --help, --version)\n"
    "  1  a channel or the run failed: no connection, the control link lost, a channel's error\n"
    "  2  bad usage (an unknown or missing option, a bad value, an unresolvable --client HOST)\n";

enum class Role { none, server, client, loopback };

struct Options {
    Role role = Role::none;
    std::string host;  // --client
    int port = -1;     // -1: not given
    bool json = false;
    std::vector<const Channel *> channels;
    Settings settings;
};

[[noreturn]] void usage_error(const std::string &what) {
    std::fprintf(stderr, "optireduce-channel-bench: %s\n(see --help)\n", what.c_str());
    std::exit(2);
}

// 0 when `text` is not a whole positive number up to `max`.
std::uint64_t parse_number(std::string_view text, std::uint64_t max) {
    const auto v = optireduce::tools::parse_unsigned(text);
    return v && *v <= max ? *v : 0;
}

// "256M" -> 268435456; 0 when it is not a positive size.
std::uint64_t parse_bytes(std::string_view text) {
    // The 32-bit chunk index caps what one run can count anyway; 1 TiB is far beyond a useful run.
    const auto v = optireduce::tools::parse_size(text);
    return v && *v <= (std::uint64_t{1} << 40) ? *v : 0;
}

std::vector<const Channel *> parse_channels(std::string_view list) {
    std::vector<const Channel *> out;
    while (!list.empty()) {
        const std::size_t comma = list.find(',');
        const std::string_view name = list.substr(0, comma);
        const Channel *c = find_channel(name);
        if (!c) {
            std::string known;
            for (const Channel &k : kChannels) known += (known.empty() ? "" : ",") + std::string(k.name);
            usage_error("unknown channel '" + std::string(name) + "' in --channels (known: " + known + ")");
        }
        out.push_back(c);
        list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
        if (comma != std::string_view::npos && list.empty()) usage_error("--channels ends with a comma");
    }
    return out;
}

Options parse(int argc, char **argv) {
    Options o;
    bool client_options = false;
    for (int i = 1; i < argc; ++i) {
        std::string_view arg = argv[i], value;
        // --opt VALUE or --opt=VALUE.
        const auto take = [&](const char *name) {
            if (const auto eq = arg.find('='); eq != std::string_view::npos) {
                value = arg.substr(eq + 1);
            } else if (i + 1 < argc) {
                value = argv[++i];
            } else {
                usage_error(std::string(name) + " needs a value");
            }
            return value;
        };
        const auto is = [&](const char *name, bool has_value) {
            const std::size_t n = std::strlen(name);
            return arg == name || (has_value && arg.size() > n && arg.substr(0, n) == name && arg[n] == '=');
        };
        const auto set_role = [&](Role r) {
            if (o.role != Role::none) usage_error("give one of --server, --client and --loopback");
            o.role = r;
        };
        if (is("--help", false) || is("-h", false)) {
            std::fputs(kUsage, stdout);
            std::exit(0);
        } else if (is("--version", false)) {
            optireduce::tools::print_version("optireduce-channel-bench");
            std::exit(0);
        } else if (is("--server", false)) {
            set_role(Role::server);
        } else if (is("--loopback", false)) {
            set_role(Role::loopback);
        } else if (is("--client", true)) {
            set_role(Role::client);
            o.host = take("--client");
        } else if (is("--port", true)) {
            const std::uint64_t p = parse_number(take("--port"), 65535);
            if (p == 0) usage_error("--port wants a port number, 1..65535, not '" + std::string(value) + "'");
            o.port = static_cast<int>(p);
        } else if (is("--channels", true)) {
            o.channels = parse_channels(take("--channels"));
            client_options = true;
        } else if (is("--bytes", true)) {
            o.settings.bytes = parse_bytes(take("--bytes"));
            if (o.settings.bytes == 0)
                usage_error("--bytes wants a positive size up to 1T, such as 256M or 1G, not '" + std::string(value) +
                            "'");
            client_options = true;
        } else if (is("--mtu", true)) {
            const std::string_view v = take("--mtu");
            const std::uint64_t m = v == "0" ? 0 : parse_number(v, 9000);
            if ((m == 0 && v != "0") || (m != 0 && m < 576))
                usage_error("--mtu wants 0 (the path MTU) or 576..9000, not '" + std::string(v) + "'");
            o.settings.mtu = static_cast<std::size_t>(m);
            client_options = true;
        } else if (is("--json", false)) {
            o.json = true;
            client_options = true;
        } else {
            usage_error("unknown argument '" + std::string(arg) + "'");
        }
    }
    if (o.role == Role::none) usage_error("give one of --server, --client HOST and --loopback");
    if (o.role == Role::server && client_options)
        usage_error("--channels, --bytes, --mtu and --json are the client's to give; the server follows it");
    if (o.role == Role::client && o.port >= 0) usage_error("give the client the server's port as --client HOST:PORT");
    if (o.channels.empty())
        for (const Channel &c : kChannels) o.channels.push_back(&c);
    return o;
}

// The server's side: one client, every run it asks for, until it closes the link.
int serve(const Fd &listener, bool verbose) {
    std::string error;
    Fd fd = accept_tcp(listener.get(), &error);
    if (fd.get() < 0) {
        std::fprintf(stderr, "optireduce-channel-bench: %s\n", error.c_str());
        return 1;
    }
    Control control(std::move(fd));
    if (!control.hello(&error)) {
        std::fprintf(stderr, "optireduce-channel-bench: %s\n", error.c_str());
        return 1;
    }
    if (verbose)
        std::fprintf(stderr, "optireduce-channel-bench: client %s connected\n", to_string(control.peer()).c_str());
    SetupMsg setup{};
    while (control.recv_or_end(setup)) {
        setup.channel[sizeof setup.channel - 1] = '\0';
        const Channel *c = find_channel(setup.channel);
        if (!c) {
            ReadyMsg refused{};
            copy_text(refused.text, std::string("this server does not know channel '") + setup.channel + "'");
            control.send(refused);
            continue;
        }
        if (verbose) std::fprintf(stderr, "optireduce-channel-bench: running %s\n", c->name);
        if (c->provider)
            serve_dgram(control, *c, setup);
        else
            serve_stream(control);
    }
    if (verbose) std::fprintf(stderr, "optireduce-channel-bench: the client is done\n");
    return 0;
}

// The client's side: every channel in turn, a row as each finishes.
int run_client(Control &control, const Options &o, const std::string &where) {
    std::string error;
    if (!control.hello(&error)) {
        std::fprintf(stderr, "optireduce-channel-bench: %s\n", error.c_str());
        return 1;
    }
    std::FILE *table = o.json ? stderr : stdout;
    print_header(table, o.settings, where);
    bool failed = false;
    for (const Channel *c : o.channels) {
        const Row row = c->provider ? run_dgram(control, *c, o.settings) : run_stream(control, o.settings);
        print_row(table, row);
        if (o.json) {
            std::fputs(to_json(row).c_str(), stdout);
            std::fflush(stdout);
        }
        failed |= !row.error.empty();
    }
    return failed ? 1 : 0;
}

int run_loopback(const Options &o) {
    in_addr lo{};
    lo.s_addr = htonl(INADDR_LOOPBACK);
    std::string error;
    // Listening before the fork: the client cannot connect before the server is there.
    Fd listener = listen_tcp(lo, static_cast<std::uint16_t>(o.port < 0 ? 0 : o.port), &error);
    if (listener.get() < 0) {
        std::fprintf(stderr, "optireduce-channel-bench: %s\n", error.c_str());
        return 1;
    }
    const std::uint16_t port = bound_port(listener.get());
    std::fflush(nullptr);
    const pid_t child = fork();
    if (child < 0) {
        std::fprintf(stderr, "optireduce-channel-bench: fork: %s\n", std::strerror(errno));
        return 1;
    }
    if (child == 0) _exit(serve(listener, false));
    listener = Fd();

    int rc;
    {
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_addr = lo;
        to.sin_port = htons(port);
        Fd fd = connect_tcp(to, &error);
        if (fd.get() < 0) {
            std::fprintf(stderr, "optireduce-channel-bench: %s\n", error.c_str());
            kill(child, SIGTERM);
            waitpid(child, nullptr, 0);
            return 1;
        }
        Control control(std::move(fd));
        rc = run_client(control, o, to_string(to) + " (a child process)");
    }  // closing the link tells the server to finish
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        std::fprintf(stderr, "optireduce-channel-bench: the server process failed (status %d)\n", status);
        return 1;
    }
    return rc;
}

}  // namespace

int main(int argc, char **argv) {
    const Options o = parse(argc, argv);
    // A peer that goes away must fail a write (the control link reports it), not kill us.
    signal(SIGPIPE, SIG_IGN);
    std::string error;
    switch (o.role) {
        case Role::server: {
            in_addr any{};
            any.s_addr = htonl(INADDR_ANY);
            const Fd listener = listen_tcp(any, static_cast<std::uint16_t>(o.port < 0 ? kDefaultPort : o.port), &error);
            if (listener.get() < 0) {
                std::fprintf(stderr, "optireduce-channel-bench: %s\n", error.c_str());
                return 1;
            }
            std::fprintf(stderr, "optireduce-channel-bench: listening on port %u\n", bound_port(listener.get()));
            return serve(listener, true);
        }
        case Role::client: {
            const auto to = parse_host(o.host, kDefaultPort, &error);
            if (!to) usage_error("--client " + o.host + ": " + error);
            Fd fd = connect_tcp(*to, &error);
            if (fd.get() < 0) {
                std::fprintf(stderr, "optireduce-channel-bench: %s (is the server running?)\n", error.c_str());
                return 1;
            }
            Control control(std::move(fd));
            return run_client(control, o, to_string(*to));
        }
        case Role::loopback: return run_loopback(o);
        case Role::none: break;
    }
    return 2;
}
