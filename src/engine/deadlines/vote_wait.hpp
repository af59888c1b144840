// SPDX-License-Identifier: BSD-3-Clause
// How long an operation waits for its peers' hole votes (engine/dgram/hole_votes.hpp): until every
// vote is in, however late, because closing without one leaves replicas that differ wherever the
// vote carried a hole. The operation's deadlines account for a base (bounded_holes.cpp: both
// phases twice, plus a few ms) and a peer may take longer to get a core or to drain its queue
// (the straggler bound's cap): a vote still lacking past both is overdue, which is counted
// (hole_votes_late), logged, and asked for less often; it is still waited for. Only a vote that
// has not come by OPTIREDUCE_VOTE_TIMEOUT_MS ends the wait: the peer is stopped, dead or cut off,
// and the job ends with that reason (an MPI job whose peer is gone cannot finish either).
// Pure arithmetic on the time points it is given, unit-tested with a fake clock.
#pragma once

#include "engine/clock.hpp"

namespace optireduce {

class VoteWait {
public:
    // An overdue vote is asked for at most this often: a stopped peer is not sent a datagram per
    // millisecond for the seconds it is away.
    static constexpr double kOverdueEveryMs = 20;

    // From `start`: overdue past `overdue_ms`, give up past `limit_ms`; ask every `every_ms`.
    VoteWait(Clock::time_point start, double overdue_ms, double limit_ms, double every_ms);

    enum class Step {
        wait,     // keep asking and waiting
        overdue,  // keep waiting; returned once, at the first step past the overdue mark
        give_up,  // the limit is spent: end the job
    };
    // What to do at `now` while some vote is lacking.
    Step step(Clock::time_point now);
    // How often to ask a peer whose vote is lacking, at the last step.
    Clock::duration every() const;
    bool overdue() const { return overdue_; }

private:
    Clock::time_point overdue_at_, limit_at_;
    double every_ms_;
    bool overdue_ = false;
};

}  // namespace optireduce
