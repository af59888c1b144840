/* A program outside the optireduce tree that uses the installed header and library. Prints
 * what it linked so the test can check the ABI it got. */
#include <optireduce/optireduce.h>
#include <stdio.h>

int main(void) {
    optireduce_stats_t stats;
    if (optireduce_get_stats(&stats) != 0) return 1;
    printf("optireduce %s (%s)\n", optireduce_version(), optireduce_mpi_abi());
    return 0;
}
