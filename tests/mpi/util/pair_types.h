/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * C layouts of the predefined pair datatypes (MPI_FLOAT_INT ... MPI_LONG_DOUBLE_INT): a value
 * `v` and an int `i`, for tests that check their sizes, extents and member offsets.
 */
#ifndef MTEST_PAIR_TYPES_H
#define MTEST_PAIR_TYPES_H

struct float_int {
    float v;
    int i;
};
struct double_int {
    double v;
    int i;
};
struct long_int {
    long v;
    int i;
};
struct two_int {
    int v;
    int i;
};
struct short_int {
    short v;
    int i;
};
struct long_double_int {
    long double v;
    int i;
};

#endif
