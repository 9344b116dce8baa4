/* Shared by the problem-file tests: each mode returns the number of failed checks (0: pass), and every
 * failed check prints one line saying what differed. */
#ifndef FEMTO_TEST_PROBLEM_H
#define FEMTO_TEST_PROBLEM_H

#include <stdio.h>

extern int test_failures;

#define CHECK(cond)                                                                                          \
    do {                                                                                                     \
        if (!(cond)) {                                                                                       \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);                         \
            test_failures++;                                                                                 \
        }                                                                                                    \
    } while (0)

int test_good(const char *file);
int test_schema(void);
int test_table(void);

#endif
