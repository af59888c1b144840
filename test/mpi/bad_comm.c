/* SPDX-License-Identifier: BSD-3-Clause */
/* An invalid communicator (MPI_COMM_NULL) given to an eligible call, with the library preloaded:
 * usage `bad_comm allreduce|iallreduce [return]`. With `return` (MPI_ERRORS_RETURN on
 * MPI_COMM_WORLD and MPI_COMM_SELF) the call must return MPI_ERR_COMM and the program exits 0;
 * without it the default fatal handler aborts the job, and MPI's message names the function the
 * program called (MPI_Allreduce / MPI_Iallreduce), not a call the library made on the handle. */
#include <mpi.h>

#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    const int nonblocking = argc > 1 && strcmp(argv[1], "iallreduce") == 0;
    float in[4096] = {0}, out[4096];
    MPI_Request req = MPI_REQUEST_NULL;
    if (argc > 2 && strcmp(argv[2], "return") == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        const int rc = nonblocking ? MPI_Iallreduce(in, out, 4096, MPI_FLOAT, MPI_SUM, MPI_COMM_NULL, &req)
                                   : MPI_Allreduce(in, out, 4096, MPI_FLOAT, MPI_SUM, MPI_COMM_NULL);
        int cls = MPI_SUCCESS;
        MPI_Error_class(rc, &cls);
        printf("%s %s returned class %d (MPI_ERR_COMM is %d)\n", cls == MPI_ERR_COMM ? "PASS" : "FAIL",
               argv[1], cls, MPI_ERR_COMM);
        MPI_Finalize();
        return cls == MPI_ERR_COMM ? 0 : 1;
    }
    if (nonblocking)
        MPI_Iallreduce(in, out, 4096, MPI_FLOAT, MPI_SUM, MPI_COMM_NULL, &req);
    else
        MPI_Allreduce(in, out, 4096, MPI_FLOAT, MPI_SUM, MPI_COMM_NULL);
    printf("not reached: the call returned\n");
    MPI_Finalize();
    return 1;
}
