/* SPDX-License-Identifier: BSD-3-Clause */
/* Runs the named cases of allreduce_check: a watchdog per case, the library's counters before
 * and after, and one verdict line per case printed by rank 0 for the whole job. */
#ifndef OPTIREDUCE_TEST_CHECK_RUNNER_H
#define OPTIREDUCE_TEST_CHECK_RUNNER_H

/* Reads CHECK_EXPECT_ENGINE, OPTIREDUCE_MIN_BYTES and looks for optireduce_get_stats. Returns 0
 * on success, non-zero (after printing why on rank 0) when the setup cannot be tested. */
int runner_init(void);

/* Runs one case; returns 1 if it failed on any rank. Collective over MPI_COMM_WORLD. */
int run_case(const char *name, void (*body)(void));

/* Prints what the library should report at MPI_Finalize (EXPECTED_TOTALS / EXPECTED_RANK) and
 * what it reported to this program (LIBSTATS), for the driver scripts. Collective. */
void runner_summary(void);

#endif
