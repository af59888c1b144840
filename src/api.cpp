// SPDX-License-Identifier: BSD-3-Clause
// The public C API (include/optireduce/optireduce.h).
#include "optireduce/optireduce.h"

#include "engine/setup/comm_hints.hpp"
#include "engine/setup/comm_state.hpp"
#include "engine/setup/context.hpp"
#include "telemetry/stats.hpp"

#include <mpi.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>

#define OPTIREDUCE_EXPORT extern "C" __attribute__((visibility("default")))

OPTIREDUCE_EXPORT const char *optireduce_version(void) { return OPTIREDUCE_VERSION_STRING; }

OPTIREDUCE_EXPORT const char *optireduce_mpi_abi(void) {
#if defined(OPTIREDUCE_ABI_MPICH)
    return "MPICH";
#else
    return "Open MPI";
#endif
}

namespace {

optireduce_stats_t read_stats() {
    const auto &s = optireduce::process_stats();
    constexpr auto relaxed = std::memory_order_relaxed;
    optireduce_stats_t out{};
// NOLINTNEXTLINE(bugprone-macro-parentheses): the argument is a member name.
#define OPTIREDUCE_STATS_COPY_(name, doc) out.name = s.name.load(relaxed);
    OPTIREDUCE_STATS_FIELDS(OPTIREDUCE_STATS_COPY_, OPTIREDUCE_STATS_COPY_)
#undef OPTIREDUCE_STATS_COPY_
    return out;
}

struct StatsField {
    const char *name;
    const char *type;
};
#define OPTIREDUCE_STATS_U64_ENTRY_(name, doc) StatsField{#name, "uint64_t"},
#define OPTIREDUCE_STATS_F64_ENTRY_(name, doc) StatsField{#name, "double"},
constexpr std::array kStatsFields{OPTIREDUCE_STATS_FIELDS(OPTIREDUCE_STATS_U64_ENTRY_, OPTIREDUCE_STATS_F64_ENTRY_)};
#undef OPTIREDUCE_STATS_U64_ENTRY_
#undef OPTIREDUCE_STATS_F64_ENTRY_
// Every field is 8 bytes wide, so the struct has no padding and field i is at offset 8 * i:
// what optireduce_stats_field_name() tells a ctypes reader is the whole layout.
static_assert(sizeof(optireduce_stats_t) == kStatsFields.size() * 8);

const StatsField *stats_field(int i) {
    if (i < 0 || static_cast<std::size_t>(i) >= kStatsFields.size()) return nullptr;
    return &kStatsFields[static_cast<std::size_t>(i)];
}

}  // namespace

OPTIREDUCE_EXPORT int optireduce_get_stats_sized(optireduce_stats_t *out, size_t size) {
    constexpr int have = static_cast<int>(sizeof(optireduce_stats_t));
    if (size == 0) return have;
    if (!out) return -1;
    const optireduce_stats_t s = read_stats();
    std::memcpy(out, &s, std::min(size, sizeof s));
    return have;
}

OPTIREDUCE_EXPORT int optireduce_get_stats(optireduce_stats_t *out) {
    if (!out) return -1;
    *out = read_stats();
    return 0;
}

OPTIREDUCE_EXPORT int optireduce_stats_field_count(void) { return static_cast<int>(kStatsFields.size()); }

OPTIREDUCE_EXPORT const char *optireduce_stats_field_name(int i) {
    const StatsField *f = stats_field(i);
    return f ? f->name : nullptr;
}

OPTIREDUCE_EXPORT const char *optireduce_stats_field_type(int i) {
    const StatsField *f = stats_field(i);
    return f ? f->type : nullptr;
}

namespace {

// The report of the communicator's last engine operation; false when there is none to give.
bool read_last_op(int comm_fortran_handle, optireduce_op_report_t &out) {
    out = optireduce_op_report_t{};
    if (!optireduce::ensure_ready()) return false;
    // A lookup only: a communicator without engine state gets none created here.
    MPI_Comm comm = PMPI_Comm_f2c(comm_fortran_handle);
    if (comm == MPI_COMM_NULL) return false;
    void *attr = nullptr;
    int found = 0;
    if (PMPI_Comm_get_attr(comm, optireduce::context().comm_keyval, &attr, &found) != MPI_SUCCESS || !found)
        return false;
    const auto *st = static_cast<const optireduce::CommState *>(attr);
    optireduce::OpReport r;
    {
        std::lock_guard lock(st->report_mutex);
        r = st->last_op;
    }
    if (r.ops == 0) return false;
    out.ops = r.ops;
    out.count = r.count;
    out.entries_expected = r.expected;
    out.entries_lost = r.lost;
    out.loss = r.loss();
    out.error_estimate = r.error_estimate;
    out.drift_estimate = r.drift_estimate;
    out.hadamard = r.hadamard ? 1 : 0;
    out.excess = r.excess ? 1 : 0;
    out.path = static_cast<int>(r.path);
    return true;
}

}  // namespace

OPTIREDUCE_EXPORT int optireduce_last_op(int comm_fortran_handle, optireduce_op_report_t *out) {
    if (!out) return -1;
    return read_last_op(comm_fortran_handle, *out) ? 0 : -1;
}

OPTIREDUCE_EXPORT int optireduce_last_op_sized(int comm_fortran_handle, optireduce_op_report_t *out, size_t size) {
    constexpr int have = static_cast<int>(sizeof(optireduce_op_report_t));
    if (size == 0) return have;
    if (!out) return -1;
    optireduce_op_report_t r;
    const bool ok = read_last_op(comm_fortran_handle, r);  // r is zeroed when there is none
    std::memcpy(out, &r, std::min(size, sizeof r));
    return ok ? have : -1;
}

OPTIREDUCE_EXPORT int optireduce_comm_enable(int comm_fortran_handle, int on) {
    if (!optireduce::ensure_ready()) return -1;
    MPI_Comm comm = PMPI_Comm_f2c(comm_fortran_handle);
    if (comm == MPI_COMM_NULL) return -1;
    return optireduce::set_comm_switch(comm, on != 0);
}
