// SPDX-License-Identifier: BSD-3-Clause
#include "bench/support/csv_log.hpp"

#include <cstdio>

namespace optireduce::bench {

bool CsvLog::open(const std::string &path) {
    file_.reset(std::fopen(path.c_str(), "w"));
    if (!file_) return false;
    std::fputs("size,mode,iteration,latency_us\n", file_.get());
    return true;
}

void CsvLog::write(std::size_t bytes, const char *mode, std::span<const double> latencies_us) {
    if (!file_) return;
    for (std::size_t i = 0; i < latencies_us.size(); ++i)
        std::fprintf(file_.get(), "%zu,%s,%zu,%.3f\n", bytes, mode, i, latencies_us[i]);
}

bool CsvLog::close() {
    if (!file_) return true;
    bool ok = std::ferror(file_.get()) == 0;
    ok = std::fclose(file_.release()) == 0 && ok;
    return ok;
}

bool open_csv_on_rank0(CsvLog &csv, const std::string &path, int rank, MPI_Comm comm) {
    int ok = 1;
    if (rank == 0 && !path.empty() && !csv.open(path)) {
        std::fprintf(stderr, "optireduce-bench: cannot create %s\n", path.c_str());
        ok = 0;
    }
    PMPI_Bcast(&ok, 1, MPI_INT, 0, comm);
    return ok != 0;
}

}  // namespace optireduce::bench
