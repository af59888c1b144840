// SPDX-License-Identifier: BSD-3-Clause
// Agreement on engine staging memory where it had to grow: the one step of an operation that can
// fail on one rank only (allocation, or registration with the provider) before any data moves.
#pragma once

#include "engine/setup/comm_state.hpp"

#include <string>

namespace optireduce {

// `staging` is what acquire_staging returned (nullptr: it failed, with *error set) and `grew`
// whether it had to allocate. Staging grows at the same operations on every rank: its sizes
// follow the call sequence, which is the same everywhere. So exactly there, and only when `agree`
// (the calling thread may call MPI), the members agree on the outcome with one int MAX allreduce:
// if any failed, every one releases its staging and returns nullptr with *error naming who, so
// all fail the operation in step with the same code instead of leaving the others waiting for a
// rank that never sends (exact mode) or writing it off (bounded mode). Operations that do not
// grow pay nothing. Also where OPTIREDUCE_FAULT_ALLOC_* makes a growth fail, for the tests.
Staging *agree_on_staging(CommState &comm, Staging *staging, bool grew, bool agree, std::string *error);

}  // namespace optireduce
