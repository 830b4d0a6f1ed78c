/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A tiny harness for the unit tests of internals: UNIT_CHECK counts and reports failures,
 * unit_finish prints the plain summary line and returns the exit status.
 */
#ifndef MF_UNIT_H
#define MF_UNIT_H

#include <stdio.h>

static int unit_failures, unit_checks;

#define UNIT_CHECK(cond, ...)                                                                      \
    do {                                                                                           \
        unit_checks++;                                                                             \
        if (!(cond)) {                                                                             \
            unit_failures++;                                                                       \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);               \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fputc('\n', stderr);                                                                   \
        }                                                                                          \
    } while (0)

static inline int unit_finish(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, unit_checks, unit_failures);
    return unit_failures == 0 ? 0 : 1;
}

#endif /* MF_UNIT_H */
