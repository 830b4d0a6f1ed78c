/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Wtime and MPI_Wtick: the clock never goes backwards over many calls, a 50 ms sleep
 * shows up as at least that much elapsed time (and not absurdly more), and the tick is a
 * positive resolution below one second.
 */
#include "mtest.h"

#include <time.h>

static void check_monotonic(void)
{
    double prev = MPI_Wtime(), now;
    int backwards = 0;

    for (int i = 0; i < 200000; i++) {
        now = MPI_Wtime();
        backwards += now < prev;
        prev = now;
    }
    MTEST_CHECK(backwards == 0, "MPI_Wtime went backwards %d times", backwards);
}

static void check_elapsed(void)
{
    struct timespec nap = {0, 50 * 1000 * 1000};
    double start = MPI_Wtime(), elapsed;

    while (nanosleep(&nap, &nap) != 0) {
        /* interrupted by a signal: sleep the rest */
    }
    elapsed = MPI_Wtime() - start;
    MTEST_CHECK(elapsed >= 0.049 && elapsed < 5.0, "a 50 ms sleep measured %g s", elapsed);
}

int main(int argc, char **argv)
{
    double tick;

    mtest_init(&argc, &argv);
    check_monotonic();
    check_elapsed();
    tick = MPI_Wtick();
    MTEST_CHECK(tick > 0.0 && tick < 1.0, "MPI_Wtick gave %g", tick);
    MTEST_CHECK(MPI_Wtime() > 0.0, "MPI_Wtime is not positive");
    return mtest_finalize(0);
}
