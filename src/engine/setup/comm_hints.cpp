// SPDX-License-Identifier: BSD-3-Clause
#include "engine/setup/comm_hints.hpp"

#include "codec/coded_stream.hpp"

#include "config/info_hints.hpp"
#include "engine/setup/comm_state.hpp"
#include "engine/setup/context.hpp"
#include "engine/setup/rank_agreement.hpp"
#include "telemetry/log.hpp"

#include <cstring>
#include <optional>
#include <string>
#include <vector>

namespace optireduce {
namespace {

// The attribute's value.
struct HintState {
    CommHints hints;
    std::string fallback_reason;  // non-empty: a hint was invalid or differed across ranks
};

HintState *find_hints(MPI_Comm comm) {
    void *attr = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(comm, context().hints_keyval, &attr, &found);
    return found ? static_cast<HintState *>(attr) : nullptr;
}

HintState &hints_of(MPI_Comm comm) {
    if (HintState *h = find_hints(comm)) return *h;
    auto *h = new HintState;
    PMPI_Comm_set_attr(comm, context().hints_keyval, h);
    return *h;
}

// Our own copy of the value: MPI_Comm_get_info may drop keys the MPI does not know.
std::optional<std::string> info_value(MPI_Info info, const char *key) {
    if (info == MPI_INFO_NULL) return std::nullopt;
    int len = 0, flag = 0;
    if (PMPI_Info_get_valuelen(info, key, &len, &flag) != MPI_SUCCESS || !flag) return std::nullopt;
    std::string value(static_cast<std::size_t>(len) + 1, '\0');  // MPI writes the terminator too
    PMPI_Info_get(info, key, len, value.data(), &flag);
    value.resize(std::strlen(value.c_str()));
    return value;
}

// Keys that look like ours but are not, most likely misspelt: named once, by rank 0.
void warn_unknown_keys(MPI_Info info, int rank) {
    if (info == MPI_INFO_NULL || rank != 0) return;
    int n = 0;
    PMPI_Info_get_nkeys(info, &n);
    for (int i = 0; i < n; ++i) {
        char key[MPI_MAX_INFO_KEY + 1] = {};
        if (PMPI_Info_get_nthkey(info, i, key) == MPI_SUCCESS && is_unknown_hint(key))
            OPTIREDUCE_LOG(warn, "unknown MPI_Info hint %s ignored (docs/configuration.md lists the valid ones)", key);
    }
}

// The engine state already set up on `comm`, or nullptr; never sets one up.
CommState *existing_state(MPI_Comm comm) {
    void *attr = nullptr;
    int found = 0;
    PMPI_Comm_get_attr(comm, context().comm_keyval, &attr, &found);
    return found ? static_cast<CommState *>(attr) : nullptr;
}

}  // namespace

void set_comm_hints(MPI_Comm comm, MPI_Info info, HintUpdate how) {
    if (comm == MPI_COMM_NULL || !ensure_ready()) return;
    int inter = 0;
    PMPI_Comm_test_inter(comm, &inter);
    if (inter) return;
    int rank = 0, size = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    HintState &state = hints_of(comm);
    const CommHints base = how == HintUpdate::merge ? state.hints : CommHints{};
    HintParse parsed = parse_hints([&](const char *key) { return info_value(info, key); }, base);
    warn_unknown_keys(info, rank);

    // One MAX reduction, as at communicator setup: each hint's hash and its complement (equal
    // everywhere when max h == ~max ~h), and the lowest rank with an invalid one.
    const std::vector<std::uint64_t> hashes = parsed.hints.agreement_hashes();
    const std::size_t k = hashes.size();
    std::vector<std::uint64_t> agree(2 * k + 1);
    for (std::size_t i = 0; i < k; ++i) {
        agree[i] = hashes[i];
        agree[k + i] = ~hashes[i];
    }
    agree[2 * k] = failure_code(!parsed.error, rank, size);
    PMPI_Allreduce(MPI_IN_PLACE, agree.data(), static_cast<int>(agree.size()), MPI_UINT64_T, MPI_MAX, comm);

    std::string reason;
    if (agree[2 * k] != 0) {
        // Every member keeps the hints it had, so that a later MPI_Comm_set_info merges onto the
        // same values everywhere.
        const int who = failed_rank(agree[2 * k], size);
        if (who == rank)
            OPTIREDUCE_LOG(error, "%s; falling back to MPI on this %d-rank communicator until its hints are fixed",
                           parsed.error->message.c_str(), size);
        reason = "invalid MPI_Info hint on rank " + std::to_string(who);
        parsed.hints = base;
    } else {
        std::string differing;
        for (std::size_t i = 0; i < k; ++i)
            if (agree[i] != ~agree[k + i])
                differing += (differing.empty() ? "" : ", ") + std::string(hint_table()[i].key);
        if (!differing.empty()) {
            if (rank == 0)
                OPTIREDUCE_LOG(warn,
                               "MPI_Info hint %s differs across the %d ranks of a communicator; falling "
                               "back to MPI on it. Give it the same value on every rank.",
                               differing.c_str(), size);
            reason = "MPI_Info hint " + differing + " differs across ranks";
        }
    }
    // The nonblocking operations still running read the deadline settings and the loss budget:
    // they finish under the values they started with.
    CommState *st = existing_state(comm);
    if (st && st->executor) st->executor->wait_idle();
    state.hints = parsed.hints;
    state.fallback_reason = reason;
    if (st && st->enabled) apply_comm_hints(*st);
    OPTIREDUCE_LOG(debug, "hints of a %d-rank communicator: %s%s%s", size, state.hints.describe().c_str(),
                   reason.empty() ? "" : "; engine off: ", reason.c_str());
}

bool comm_hints_allow_engine(MPI_Comm comm) {
    const HintState *h = find_hints(comm);
    return !h || (h->hints.enabled() && h->fallback_reason.empty());
}

int set_comm_switch(MPI_Comm comm, bool on) {
    HintState &state = hints_of(comm);
    const int was = state.hints.enabled() ? 1 : 0;
    state.hints.set_enabled(on);
    return was;
}

void apply_comm_hints(CommState &st) {
    const Config &cfg = context().config;
    const HintState *h = find_hints(st.comm);
    const CommHints hints = h ? h->hints : CommHints{};
    st.min_bytes = hints.min_bytes().value_or(cfg.min_bytes);
    if (!st.bounded) return;  // exact mode has no deadline and loses nothing
    DeadlineSettings s = st.bounded->deadlines.settings();
    s.target_loss = hints.target_loss().value_or(cfg.target_loss);
    s.fixed_ms = hints.timeout_ms().value_or(cfg.timeout_ms);
    st.bounded->deadlines.set_settings(s);
    st.bounded->max_loss = hints.max_loss().value_or(cfg.max_loss);
    CommState::Bounded &b = *st.bounded;
    b.codec = hints.codec().value_or(cfg.codec);
    b.floats_per_datagram = entries_per_payload(b.codec, b.payload_bytes);
    // Carry keeps what every rank dropped alike: only agreed holes are (the environment's pair
    // is checked at startup; a hint can only ask).
    const bool carry = hints.carry().value_or(cfg.carry);
    if (carry && !b.identical_replicas && st.rank == 0)
        OPTIREDUCE_LOG(warn,
                       "optireduce_carry=1 needs OPTIREDUCE_IDENTICAL_REPLICAS=1: nothing is carried on this "
                       "communicator. Set OPTIREDUCE_IDENTICAL_REPLICAS=1 to carry.");
    if (!carry || !b.identical_replicas) {
        b.carry.reset();  // its pending residuals are counted as dropped
    } else if (!b.carry) {
        constexpr double kMiB = 1024.0 * 1024.0;
        b.carry = std::make_unique<CarryStore>(static_cast<std::size_t>(cfg.carry_max_mb * kMiB),
                                               static_cast<std::uint64_t>(cfg.carry_idle_calls));
    }
}

int copy_comm_hints_attr(MPI_Comm, int, void *, void *in, void *out, int *flag) {
    *static_cast<void **>(out) = new HintState(*static_cast<const HintState *>(in));
    *flag = 1;
    return MPI_SUCCESS;
}

int delete_comm_hints_attr(MPI_Comm, int, void *attr, void *) {
    delete static_cast<HintState *>(attr);
    return MPI_SUCCESS;
}

}  // namespace optireduce
