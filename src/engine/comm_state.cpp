#include "engine/comm_state.hpp"

#include "codec/sharding.hpp"

namespace optireduce {

Staging *CommState::acquire_staging(std::size_t n, std::string *error) {
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
    const std::size_t shard = shard_of(n, size, 0).count;  // shard 0 is the largest
    // The datagram channel copies payloads out of its own receive pool: no registration.
    if (!s->result.reserve(n, endpoint, error)) return nullptr;
    if (!s->incoming.reserve(shard * static_cast<std::size_t>(size), endpoint, error)) return nullptr;
    if (endpoint && endpoint->needs_registration() && !s->input.reserve(n, endpoint, error)) return nullptr;
    s->busy = true;
    return s;
}

}  // namespace optireduce
