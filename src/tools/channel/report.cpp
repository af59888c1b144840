// SPDX-License-Identifier: BSD-3-Clause
#include "report.hpp"

#include "common/json_writer.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace optireduce::channel_bench {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

double ratio(double a, double b) { return b > 0 ? a / b : kNaN; }

// What the table and the JSON show, from a row's counts: NaN where nothing was there to divide.
struct Figures {
    double gbps, loss_pct, send_us, recv_us, total_us, cpu_s_per_gib;
};

Figures figures(const Row &r) {
    // Units the CPU cost is counted in: datagrams, or the stream's 1472-byte equivalents.
    const double sent = r.stream ? static_cast<double>(r.sent_bytes) / kStreamUnitBytes : static_cast<double>(r.sent);
    const double got =
        r.stream ? static_cast<double>(r.received_bytes) / kStreamUnitBytes : static_cast<double>(r.received);
    Figures f{};
    f.gbps = ratio(static_cast<double>(r.received_bytes) * 8 / 1e9, r.recv_wall_s);
    f.loss_pct = 100 * (1 - ratio(got, sent));
    f.send_us = 1e6 * ratio(r.send_cpu_s, sent);
    f.recv_us = 1e6 * ratio(r.recv_cpu_s, got);
    f.total_us = f.send_us + f.recv_us;
    // Each side per GiB it handled, so loss does not make the receiver look cheaper.
    f.cpu_s_per_gib = ratio(r.send_cpu_s, static_cast<double>(r.sent_bytes) / kGiB) +
                      ratio(r.recv_cpu_s, static_cast<double>(r.received_bytes) / kGiB);
    return f;
}

std::string size_text(std::uint64_t b) {
    const char *units[] = {"bytes", "KiB", "MiB", "GiB"};
    int u = 0;
    while (u < 3 && b % 1024 == 0 && b >= 1024) b /= 1024, ++u;
    return std::to_string(b) + " " + units[u];
}

std::string number(const char *fmt, double v) {
    if (!std::isfinite(v)) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, fmt, v);
    return buf;
}

}  // namespace

void print_header(std::FILE *out, const Settings &settings, const std::string &where) {
    const std::string cap = settings.mtu ? ", capped at " + std::to_string(settings.mtu) + "," : "";
    std::fprintf(out,
                 "optireduce-channel-bench: %s of payload per channel, client -> server at %s\n"
                 "  datagram: bytes per datagram, our 40-byte header included (kernel: what the path MTU%s allows)\n"
                 "  Gbit/s: payload received / the receiver's time from first to last arrival\n"
                 "  us/dg: CPU microseconds (user + system) per datagram sent, and per datagram received;\n"
                 "         tcp: per %.0f bytes of stream, the payload of one datagram at a 1500-byte MTU\n"
                 "  CPU s/GiB: the sender's CPU seconds per GiB sent + the receiver's per GiB received\n"
                 "  (over loopback and veth the kernel's receive processing runs in the sender's system calls\n"
                 "  and is billed to the sender: compare the totals)\n\n",
                 size_text(settings.bytes).c_str(), where.c_str(), cap.c_str(), kStreamUnitBytes);
    std::fprintf(out, "%-12s %8s %7s %7s %11s %11s %12s %10s\n", "channel", "datagram", "Gbit/s", "loss%", "send us/dg",
                 "recv us/dg", "total us/dg", "CPU s/GiB");
    std::fflush(out);
}

void print_row(std::FILE *out, const Row &row) {
    if (!row.error.empty()) {
        std::fprintf(out, "%-12s failed: %s\n", row.channel.c_str(), row.error.c_str());
    } else {
        const Figures f = figures(row);
        std::fprintf(out, "%-12s %8s %7s %7s %11s %11s %12s %10s\n", row.channel.c_str(),
                     row.stream ? "stream" : std::to_string(row.datagram).c_str(), number("%.2f", f.gbps).c_str(),
                     number("%.3f", f.loss_pct).c_str(), number("%.3f", f.send_us).c_str(),
                     number("%.3f", f.recv_us).c_str(), number("%.3f", f.total_us).c_str(),
                     number("%.3f", f.cpu_s_per_gib).c_str());
    }
    if (!row.note.empty()) std::fprintf(out, "%-12s   (%s)\n", "", row.note.c_str());
    std::fflush(out);
}

std::string to_json(const Row &row) {
    std::ostringstream os;
    tools::JsonWriter j(os);
    j.begin_object();
    j.field("channel", row.channel);
    if (!row.error.empty()) {
        j.field("error", row.error);
        j.end_object();
        return os.str();
    }
    const Figures f = figures(row);
    // The stream has no datagrams: null, not 0.
    const auto datagrams = [&](const char *key, std::uint64_t v) {
        if (row.stream)
            j.null_field(key);
        else
            j.field(key, v);
    };
    datagrams("datagram_bytes", row.datagram);
    datagrams("sent_datagrams", row.sent);
    j.field("sent_bytes", row.sent_bytes);
    datagrams("received_datagrams", row.received);
    j.field("received_bytes", row.received_bytes);
    datagrams("coalesced_datagrams", row.coalesced);
    j.field("receive_seconds", row.recv_wall_s);
    j.field("send_cpu_seconds", row.send_cpu_s);
    j.field("receive_cpu_seconds", row.recv_cpu_s);
    j.field("gbit_per_s", f.gbps);
    j.field("loss_percent", f.loss_pct);
    j.field("cpu_unit", row.stream ? "1472 bytes" : "datagram");
    j.field("send_us_per_unit", f.send_us);
    j.field("receive_us_per_unit", f.recv_us);
    j.field("total_us_per_unit", f.total_us);
    j.field("cpu_seconds_per_gib", f.cpu_s_per_gib);
    if (!row.note.empty()) j.field("note", row.note);
    j.end_object();
    return os.str();
}

}  // namespace optireduce::channel_bench
