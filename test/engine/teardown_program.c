/* SPDX-License-Identifier: BSD-3-Clause */
/* A small job for the leak check: engine calls on MPI_COMM_WORLD and on a communicator freed
 * before MPI_Finalize, so both teardown paths (MPI_Comm_free and MPI_Finalize) run. */
#include <mpi.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    static float a[5000], b[5000];
    for (int i = 0; i < 5000; ++i) a[i] = (float)i;
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    for (int i = 0; i < 20; ++i) {
        MPI_Allreduce(a, b, 5000, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(a, b, 5000, MPI_FLOAT, MPI_SUM, dup);
    }
    MPI_Comm_free(&dup);
    MPI_Finalize();
    return 0;
}
