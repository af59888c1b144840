// SPDX-License-Identifier: BSD-3-Clause
#include "bench/support/progress.hpp"

#include <unistd.h>

namespace optireduce::bench {

Progress::Progress(bool is_rank0, bool forced) {
    if (!is_rank0) return;
    if (forced)
        to_ = stdout;
    else if (isatty(STDERR_FILENO))
        to_ = stderr;
}

void Progress::show(const std::string &line) const {
    if (!to_) return;
    std::fprintf(to_, "\r\033[K%s", line.c_str());  // \033[K: erase the rest of the old line
    std::fflush(to_);
}

void Progress::clear() const {
    if (!to_) return;
    std::fputs("\r\033[K", to_);
    std::fflush(to_);
}

}  // namespace optireduce::bench
