/* SPDX-License-Identifier: BSD-3-Clause */
/* Where the nonblocking executor thread runs (src/engine/requests/comm_executor.cpp). With a rank of the
 * job on every core of the node there is no spare core: the executor must stay on its rank's own
 * cores, not sit on another rank's. With a spare core and a bound rank it must be off the rank's
 * cores. The program runs one MPI_Iallreduce through the library (OPTIREDUCE_MIN_BYTES=0), finds
 * the thread the library names "optireduce-exec" and compares its CPU affinity with the rank's.
 * Exits non-zero on any failure; prints which rule it checked. */
#define _GNU_SOURCE
#include <mpi.h>

#include <dirent.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/* The tid of this process's thread named `name`, or -1. */
static pid_t find_thread(const char *name) {
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    pid_t found = -1;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.') continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        if (fgets(comm, sizeof comm, f)) comm[strcspn(comm, "\n")] = '\0';
        fclose(f);
        if (strcmp(comm, name) == 0) found = (pid_t)atoi(e->d_name);
    }
    closedir(d);
    return found;
}

static void set_text(const cpu_set_t *s, char *out, size_t len) {
    out[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, s)) {
            const size_t used = strlen(out);
            snprintf(out + used, len - used, "%s%d", used ? "," : "", c);
        }
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    enum { n = 65536 };
    static float in[n], out[n];
    for (int i = 0; i < n; ++i) in[i] = (float)(i % 7 + rank);
    MPI_Request req;
    MPI_Iallreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    int failed = 0;
    for (int i = 0; i < n && !failed; ++i)
        if (out[i] != (float)(size * (i % 7) + size * (size - 1) / 2)) {
            printf("FAIL rank %d: element %d is %g\n", rank, i, (double)out[i]);
            failed = 1;
        }

    const char *local = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const long ranks = local ? atol(local) : 0, cpus = sysconf(_SC_NPROCESSORS_ONLN);
    cpu_set_t mine, exec;
    CPU_ZERO(&mine);
    CPU_ZERO(&exec);
    const pid_t tid = find_thread("optireduce-exec");
    if (tid < 0) {
        printf("FAIL rank %d: no thread named optireduce-exec (did the MPI_Iallreduce go through the library?)\n",
               rank);
        failed = 1;
    } else if (sched_getaffinity(0, sizeof mine, &mine) != 0 || sched_getaffinity(tid, sizeof exec, &exec) != 0) {
        printf("FAIL rank %d: sched_getaffinity failed\n", rank);
        failed = 1;
    } else {
        char m[512], x[512];
        set_text(&mine, m, sizeof m);
        set_text(&exec, x, sizeof x);
        cpu_set_t both;
        CPU_AND(&both, &mine, &exec);
        if (ranks >= cpus) {
            if (!CPU_EQUAL(&mine, &exec)) {
                printf("FAIL rank %d: %ld ranks on %ld cores, yet the executor runs on cores %s, not the rank's %s\n",
                       rank, ranks, cpus, x, m);
                failed = 1;
            } else if (rank == 0) {
                printf("checked: %ld ranks on %ld cores, the executor on its rank's cores (%s)\n", ranks, cpus, m);
            }
        } else if (CPU_COUNT(&mine) < cpus) {
            if (CPU_COUNT(&both) != 0) {
                printf("FAIL rank %d: a spare core, yet the executor runs on cores %s, the rank's are %s\n", rank, x, m);
                failed = 1;
            } else if (rank == 0) {
                printf("checked: %ld ranks on %ld cores, the executor off its rank's cores (%s, the rank on %s)\n",
                       ranks, cpus, x, m);
            }
        } else if (rank == 0) {
            printf("NOT CHECKED: the rank is not bound, so no placement rule applies\n");
            failed = 1;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0) printf("%s executor placement\n", failed ? "FAILED" : "PASS");
    MPI_Finalize();
    return failed ? 1 : 0;
}
