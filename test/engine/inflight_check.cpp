// SPDX-License-Identifier: BSD-3-Clause
// Two Transpose AllReduce operations in flight on one communicator at once (legal MPI: an
// MPI_Iallreduce may overlap a blocking one). Even ranks wait for the second operation
// first, odd ranks for the first, so completions interleave differently on every rank; the
// results must still match PMPI_Allreduce, which only holds if messages are matched by sequence
// number rather than by arrival order. Links the engine objects directly (no wrappers).
#include "engine/exact/tar_operation.hpp"
#include "engine/setup/comm_registry.hpp"
#include "engine/setup/comm_state.hpp"
#include "engine/setup/context.hpp"

#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <mutex>
#include <vector>

using namespace optireduce;

namespace {

std::vector<float> make_input(int rank, std::size_t n, int salt) {
    std::vector<float> v(n);
    for (std::size_t i = 0; i < n; ++i)
        v[i] =
            static_cast<float>(((i * 31 + static_cast<std::size_t>(rank) * 17 + static_cast<std::size_t>(salt)) % 97)) /
                8.0f -
            6.0f;
    return v;
}

bool matches(const float *got, const std::vector<float> &in, std::size_t n, int size) {
    std::vector<float> ref(n);
    PMPI_Allreduce(in.data(), ref.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (std::size_t i = 0; i < n; ++i)
        if (std::fabs(got[i] - ref[i]) > 1e-6 * 6.0 * size * 2) return false;
    return true;
}

}  // namespace

int main(int argc, char **argv) {
    PMPI_Init(&argc, &argv);
    on_mpi_initialized();
    int rank = 0, size = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);

    int failures = 0;
    CommState *st = comm_state_for(MPI_COMM_WORLD);
    if (!st->enabled) {
        std::fprintf(stderr, "FAIL engine not enabled: %s\n", st->fallback_reason.c_str());
        failures = 1;
    } else {
        for (std::size_t n : {std::size_t{0}, std::size_t{3}, std::size_t{1000}, std::size_t{300007}}) {
            const auto a = make_input(rank, n, 1), b = make_input(rank, n, 2);
            std::string err;
            Staging *sa = st->acquire_staging(n, &err);
            Staging *sb = st->acquire_staging(n, &err);
            RdmEndpoint &ep = *st->endpoint;
            TarOperation op_a(*st, *sa, a.data(), nullptr, n), op_b(*st, *sb, b.data(), nullptr, n);
            {
                std::unique_lock lock(ep.mutex());
                ep.add_active(&op_a);
                ep.add_active(&op_b);
                op_a.start();
                op_b.start();
                TarOperation &first = rank % 2 ? op_a : op_b, &second = rank % 2 ? op_b : op_a;
                while (!first.finished()) ep.progress();
                while (!second.finished()) ep.progress();
                ep.remove_active(&op_a);
                ep.remove_active(&op_b);
            }
            const bool ok = !op_a.failed() && !op_b.failed() && matches(op_a.result(), a, n, size) &&
                            matches(op_b.result(), b, n, size);
            st->release_staging(sa);
            st->release_staging(sb);
            int all_ok = ok ? 1 : 0;
            PMPI_Allreduce(MPI_IN_PLACE, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            if (rank == 0) std::printf("%s two operations in flight, n=%zu\n", all_ok ? "PASS" : "FAIL", n);
            if (!all_ok) ++failures;
        }
    }
    on_mpi_finalize();
    PMPI_Finalize();
    return failures ? 1 : 0;
}
