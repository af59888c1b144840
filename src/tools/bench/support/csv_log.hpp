// SPDX-License-Identifier: BSD-3-Clause
// --csv: every timed iteration, for plots and distributions the table cannot show.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <memory>
#include <span>
#include <string>

namespace optireduce::bench {

class CsvLog {
public:
    CsvLog() = default;  // disabled: writes nothing
    // Opens `path` and writes the header; false when it cannot be created.
    bool open(const std::string &path);

    void write(std::size_t bytes, const char *mode, std::span<const double> latencies_us);

    // Closes the file; false if any write failed (a full disk must not leave a silently short log).
    bool close();

private:
    struct Closer {
        void operator()(std::FILE *f) const { std::fclose(f); }
    };
    std::unique_ptr<std::FILE, Closer> file_;
};

// Collective: rank 0 opens `path` (nothing when it is empty) and every rank learns whether that
// worked, or the others would go on into collectives rank 0 never joins. Reports a failure on
// stderr.
bool open_csv_on_rank0(CsvLog &csv, const std::string &path, int rank, MPI_Comm comm);

}  // namespace optireduce::bench
