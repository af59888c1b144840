/* SPDX-License-Identifier: BSD-3-Clause */
/* optireduce.h as a C99 program sees it (compiled with -std=c99 -Wpedantic, no extensions):
 * the struct's size and layout, and the sized stats call, for stats_api_test.cpp to compare. */
#include "optireduce/optireduce.h"

size_t optireduce_test_c_stats_size(void);
size_t optireduce_test_c_offset_of_last(void);
int optireduce_test_c_read(optireduce_stats_t *out);

size_t optireduce_test_c_stats_size(void) { return sizeof(optireduce_stats_t); }

size_t optireduce_test_c_offset_of_last(void) { return offsetof(optireduce_stats_t, datagrams_given_up); }

int optireduce_test_c_read(optireduce_stats_t *out) { return optireduce_get_stats_sized(out, sizeof *out); }
