// SPDX-License-Identifier: BSD-3-Clause
// The bounded-mode channel of a process: one datagram endpoint, the router that places what
// arrives, and the progress thread that drains it. Shared by every communicator in bounded mode.
#pragma once

#include "engine/dgram/dgram_router.hpp"
#include "engine/dgram/progress_thread.hpp"
#include "transport/dgram_endpoint.hpp"

#include <memory>
#include <string>

namespace optireduce {

struct DgramChannel {
    std::unique_ptr<DgramEndpoint> endpoint;
    DgramRouter router;
    std::unique_ptr<ProgressThread> progress;  // last: stopped before the others go

    ~DgramChannel() { progress.reset(); }
};

}  // namespace optireduce
