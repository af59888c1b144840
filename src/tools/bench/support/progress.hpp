// SPDX-License-Identifier: BSD-3-Clause
// A one-line, self-overwriting progress indicator for rank 0.
#pragma once

#include <cstdio>
#include <string>

namespace optireduce::bench {

class Progress {
public:
    // Run without a launcher, the line goes to stderr when that is a terminal, and nowhere when
    // it is a file or pipe, where carriage returns would be noise. Under mpirun or mpiexec the
    // ranks never see the user's terminal, so a caller that knows it is there passes `forced`;
    // the line then goes to stdout, because the launcher forwards stdout and stderr separately
    // and a progress line on stderr would land in the middle of table rows.
    Progress(bool is_rank0, bool forced);

    void show(const std::string &line) const;
    // Erases the line so the next table row starts clean.
    void clear() const;

private:
    std::FILE *to_ = nullptr;  // null: disabled
};

}  // namespace optireduce::bench
