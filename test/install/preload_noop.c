/* SPDX-License-Identifier: BSD-3-Clause */
/* An LD_PRELOAD entry that does nothing: the launcher tests check that optireduce-run keeps
 * a caller's existing LD_PRELOAD, and the launchers they query must be able to load it. */
int optireduce_test_preload_noop;
