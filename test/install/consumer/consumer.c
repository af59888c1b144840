/* SPDX-License-Identifier: BSD-3-Clause */
/* A program outside the optireduce tree that uses the installed header and library. Prints
 * what it linked so the test can check the ABI it got. Exits non-zero if the installed header
 * and library disagree on the stats struct. */
#include <optireduce/optireduce.h>
#include <stdio.h>

int main(void) {
    optireduce_stats_t stats;
    if (optireduce_get_stats(&stats) != 0) return 1;
    if (optireduce_get_stats_sized(&stats, sizeof stats) != (int)sizeof stats) return 2;
    if ((size_t)optireduce_stats_field_count() * 8 != sizeof stats) return 3;
    printf("optireduce %s (%s)\n", optireduce_version(), optireduce_mpi_abi());
    return 0;
}
