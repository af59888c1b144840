// SPDX-License-Identifier: BSD-3-Clause
#include "engine/setup/comm_state.hpp"

#include "codec/sharding.hpp"

namespace optireduce {

Staging *CommState::acquire_staging(std::size_t n, std::string *error, bool *grew) {
    return acquire_staging(n, shard_of(n, size, 0).count, 0, 0, error, grew);  // shard 0 is the largest
}

Staging *CommState::acquire_staging(std::size_t result, std::size_t shard, std::size_t wire, std::size_t coded,
                                    std::string *error, bool *grew) {
    const std::size_t coded_floats = (coded + sizeof(float) - 1) / sizeof(float);
    Staging *s = nullptr;
    for (auto &candidate : staging_)
        if (!candidate->busy) {
            s = candidate.get();
            break;
        }
    if (!s) {
        staging_.push_back(std::make_unique<Staging>());
        s = staging_.back().get();
    }
    const bool registers = endpoint && endpoint->needs_registration();
    if (grew)
        *grew = !s->result.fits(result) || !s->incoming.fits(shard * static_cast<std::size_t>(size)) ||
                (registers && !s->input.fits(result)) || (wire && !s->wire.fits(wire)) ||
                (coded && !s->coded.fits(coded_floats));
    // The datagram channel copies payloads out of its own receive pool: no registration.
    if (!s->result.reserve(result, endpoint, error)) return nullptr;
    if (!s->incoming.reserve(shard * static_cast<std::size_t>(size), endpoint, error)) return nullptr;
    if (registers && !s->input.reserve(result, endpoint, error)) return nullptr;
    if (wire && !s->wire.reserve(wire, nullptr, error)) return nullptr;
    if (coded && !s->coded.reserve(coded_floats, nullptr, error)) return nullptr;
    s->busy = true;
    return s;
}

}  // namespace optireduce
