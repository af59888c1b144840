// The test-only OPTIREDUCE_FAULT_SEND_* knobs: one decision for every sender of the engine (the
// bounded mode's datagram rounds and the exact mode's transfers), so both fail alike.
#pragma once

namespace optireduce {

// Whether this rank's next send fails (as if the channel returned -FI_EIO): never unless this is
// OPTIREDUCE_FAULT_SEND_RANK, then with OPTIREDUCE_FAULT_SEND_PROB, each call its own draw.
bool injected_send_failure();

}  // namespace optireduce
