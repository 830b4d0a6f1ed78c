/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_T performance variables: the per-VCI counters grow with traffic and read the difference
 * since allocation or reset; the communicator-bound comm_vci handle names the VCI that carries
 * the communicator's messages; sessions and handles, and every error class of those calls.
 */
#include "mtest.h"

#include <stdlib.h>
#include <string.h>

#define EXPECT(call, cls) MTEST_CHECK((call) == (cls), "%s did not return %s", #call, #cls)

static int pvar(const char *name, int cls)
{
    int index = -1;
    EXPECT(MPI_T_pvar_get_index(name, cls, &index), MPI_SUCCESS);
    return index;
}

int main(int argc, char **argv)
{
    int provided, rank, size, count;
    mtest_init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);

    int num;
    EXPECT(MPI_T_pvar_get_num(&num), MPI_SUCCESS);
    int sends = pvar("vci_sends", MPI_T_PVAR_CLASS_COUNTER);
    int recvs = pvar("vci_recvs", MPI_T_PVAR_CLASS_COUNTER);
    int locks = pvar("vci_lock_acquired", MPI_T_PVAR_CLASS_COUNTER);
    int active = pvar("vci_active", MPI_T_PVAR_CLASS_STATE);
    int endpoints = pvar("vci_endpoints", MPI_T_PVAR_CLASS_LEVEL);
    int map = pvar("comm_vci", MPI_T_PVAR_CLASS_GENERIC);
    int index;
    EXPECT(MPI_T_pvar_get_index("vci_sends", MPI_T_PVAR_CLASS_LEVEL, &index),
           MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_pvar_get_index("nothing", MPI_T_PVAR_CLASS_COUNTER, &index),
           MPI_T_ERR_INVALID_NAME);
    EXPECT(MPI_T_pvar_get_info(num, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                               NULL, NULL),
           MPI_T_ERR_INVALID_INDEX);
    int cls, bind, ro, cont, atomic;
    MPI_Datatype dt;
    EXPECT(MPI_T_pvar_get_info(sends, NULL, NULL, NULL, &cls, &dt, NULL, NULL, NULL, &bind, &ro,
                               &cont, &atomic),
           MPI_SUCCESS);
    /* a counter supports readreset, so it must say it is atomic (it said 0 once) */
    MTEST_CHECK(cls == MPI_T_PVAR_CLASS_COUNTER && dt == MPI_UNSIGNED_LONG_LONG &&
                    bind == MPI_T_BIND_NO_OBJECT && cont == 1 && ro == 0 && atomic == 1,
                "vci_sends info is wrong (readonly %d atomic %d)", ro, atomic);
    EXPECT(MPI_T_pvar_get_info(map, NULL, NULL, NULL, NULL, &dt, NULL, NULL, NULL, &bind, &ro, NULL,
                               &atomic),
           MPI_SUCCESS);
    MTEST_CHECK(bind == MPI_T_BIND_MPI_COMM && dt == MPI_INT && ro == 1 && atomic == 0,
                "comm_vci info is wrong (readonly %d atomic %d)", ro, atomic);

    MPI_T_pvar_session s, s2;
    EXPECT(MPI_T_pvar_session_create(&s), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_session_create(&s2), MPI_SUCCESS);
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);

    /* comm_vci: home VCI within the pool, spread at least 1 */
    MPI_T_pvar_handle hmap, hsend, hrecv, hlock, hact, hep;
    int nvcis, home_spread[2] = {-1, -1};
    EXPECT(MPI_T_pvar_handle_alloc(s, map, &comm, &hmap, &count), MPI_SUCCESS);
    MTEST_CHECK(count == 2, "comm_vci count %d", count);
    EXPECT(MPI_T_pvar_read(s, hmap, home_spread), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_handle_alloc(s, sends, NULL, &hsend, &nvcis), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_handle_alloc(s, recvs, NULL, &hrecv, &count), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_handle_alloc(s, locks, NULL, &hlock, &count), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_handle_alloc(s, active, NULL, &hact, &count), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_handle_alloc(s, endpoints, NULL, &hep, &count), MPI_SUCCESS);
    MTEST_CHECK(nvcis >= 1 && nvcis <= 64 && count == 1, "pool of %d VCIs", nvcis);
    if (getenv("MANIFOLD_VCI_COUNT") != NULL)
        MTEST_CHECK(nvcis == atoi(getenv("MANIFOLD_VCI_COUNT")), "vci_sends has %d elements",
                    nvcis);
    int home = home_spread[0];
    MTEST_CHECK(home >= 0 && home < nvcis && home_spread[1] >= 1, "comm_vci reads %d %d", home,
                home_spread[1]);
    MPI_Comm null_comm = MPI_COMM_NULL;
    MPI_T_pvar_handle bad;
    EXPECT(MPI_T_pvar_handle_alloc(s, map, &null_comm, &bad, &count), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_pvar_handle_alloc(s, map, NULL, &bad, &count), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_pvar_handle_alloc(s, num, NULL, &bad, &count), MPI_T_ERR_INVALID_INDEX);
    EXPECT(MPI_T_pvar_handle_alloc(MPI_T_PVAR_SESSION_NULL, sends, NULL, &bad, &count),
           MPI_T_ERR_INVALID_SESSION);

    /* fresh counters read zero; traffic on comm shows on its home VCI */
    unsigned long long *v = calloc((size_t)nvcis, sizeof(*v));
    unsigned long long *w = calloc((size_t)nvcis, sizeof(*w));
    EXPECT(MPI_T_pvar_read(s, hsend, v), MPI_SUCCESS);
    MTEST_CHECK(v[home] == 0, "a fresh vci_sends handle reads %llu", v[home]);
    const int nmsg = 20;
    int buf = 0;
    if (rank == 0) {
        for (int dest = 1; dest < size; dest++)
            for (int i = 0; i < nmsg; i++)
                MPI_Send(&buf, 1, MPI_INT, dest, i, comm);
    } else {
        for (int i = 0; i < nmsg; i++)
            MPI_Recv(&buf, 1, MPI_INT, 0, i, comm, MPI_STATUS_IGNORE);
    }
    EXPECT(MPI_T_pvar_read(s, hsend, v), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_read(s, hrecv, w), MPI_SUCCESS);
    if (rank == 0)
        MTEST_CHECK(v[home] >= (unsigned long long)(nmsg * (size - 1)),
                    "vci_sends[%d] = %llu after %d sends", home, v[home], nmsg * (size - 1));
    else
        MTEST_CHECK(w[home] >= (unsigned long long)nmsg, "vci_recvs[%d] = %llu after %d receives",
                    home, w[home], nmsg);
    EXPECT(MPI_T_pvar_read(s, hlock, v), MPI_SUCCESS);
    MTEST_CHECK(v[home] > 0, "no lock acquisitions on VCI %d", home);
    int *act = calloc((size_t)nvcis, sizeof(*act));
    EXPECT(MPI_T_pvar_read(s, hact, act), MPI_SUCCESS);
    MTEST_CHECK(act[home] == 1, "home VCI %d is not active", home);
    unsigned long long ep = 0;
    EXPECT(MPI_T_pvar_read(s, hep, &ep), MPI_SUCCESS);
    MTEST_CHECK(ep >= 1, "no endpoints after traffic");

    /* readreset, reset, write: only this handle's view changes */
    EXPECT(MPI_T_pvar_readreset(s, hrecv, w), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_read(s, hrecv, w), MPI_SUCCESS);
    MTEST_CHECK(w[home] == 0, "vci_recvs reads %llu right after readreset", w[home]);
    for (int i = 0; i < nvcis; i++)
        w[i] = 1000;
    EXPECT(MPI_T_pvar_write(s, hrecv, w), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_read(s, hrecv, w), MPI_SUCCESS);
    MTEST_CHECK(w[home] >= 1000, "vci_recvs reads %llu after writing 1000", w[home]);
    EXPECT(MPI_T_pvar_reset(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_read(s, hrecv, w), MPI_SUCCESS);
    MTEST_CHECK(w[home] < 1000, "vci_recvs reads %llu after resetting all", w[home]);
    MPI_T_pvar_handle h2;
    EXPECT(MPI_T_pvar_handle_alloc(s2, sends, NULL, &h2, &count), MPI_SUCCESS);

    /* errors */
    EXPECT(MPI_T_pvar_start(s, hsend), MPI_T_ERR_PVAR_NO_STARTSTOP);
    EXPECT(MPI_T_pvar_stop(s, hsend), MPI_T_ERR_PVAR_NO_STARTSTOP);
    EXPECT(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES), MPI_SUCCESS);
    EXPECT(MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, v), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_pvar_read(s, h2, v), MPI_T_ERR_INVALID_HANDLE); /* another session's */
    EXPECT(MPI_T_pvar_read(s, MPI_T_PVAR_HANDLE_NULL, v), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_pvar_write(s, hact, act), MPI_T_ERR_PVAR_NO_WRITE);
    EXPECT(MPI_T_pvar_reset(s, hmap), MPI_T_ERR_PVAR_NO_WRITE);
    EXPECT(MPI_T_pvar_readreset(s, hep, &ep), MPI_T_ERR_PVAR_NO_WRITE);
    EXPECT(MPI_T_pvar_read(MPI_T_PVAR_SESSION_NULL, hsend, v), MPI_T_ERR_INVALID_SESSION);
    MPI_T_pvar_handle stale = hsend;
    EXPECT(MPI_T_pvar_handle_free(s, &hsend), MPI_SUCCESS);
    MTEST_CHECK(hsend == MPI_T_PVAR_HANDLE_NULL, "freed handle not set to null");
    EXPECT(MPI_T_pvar_read(s, stale, v), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_pvar_handle_free(s, &stale), MPI_T_ERR_INVALID_HANDLE);

    /* running out of sessions and of handles */
    MPI_T_pvar_session many[128];
    int nsess = 0, rc = MPI_SUCCESS;
    while (nsess < 128 && (rc = MPI_T_pvar_session_create(&many[nsess])) == MPI_SUCCESS)
        nsess++;
    MTEST_CHECK(rc == MPI_T_ERR_OUT_OF_SESSIONS, "session %d: %d", nsess, rc);
    while (nsess > 0)
        EXPECT(MPI_T_pvar_session_free(&many[--nsess]), MPI_SUCCESS);
    int nh = 0;
    rc = MPI_SUCCESS;
    while (nh < 4096 &&
           (rc = MPI_T_pvar_handle_alloc(s2, sends, NULL, &bad, &count)) == MPI_SUCCESS)
        nh++;
    MTEST_CHECK(rc == MPI_T_ERR_OUT_OF_HANDLES, "handle %d: %d", nh, rc);

    /* freeing a session frees its handles */
    MPI_T_pvar_session stale_s = s2;
    EXPECT(MPI_T_pvar_session_free(&s2), MPI_SUCCESS);
    MTEST_CHECK(s2 == MPI_T_PVAR_SESSION_NULL, "freed session not set to null");
    EXPECT(MPI_T_pvar_session_free(&stale_s), MPI_T_ERR_INVALID_SESSION);
    EXPECT(MPI_T_pvar_read(s, h2, v), MPI_T_ERR_INVALID_HANDLE);
    EXPECT(MPI_T_pvar_session_free(&s), MPI_SUCCESS);
    EXPECT(MPI_T_finalize(), MPI_SUCCESS);
    MPI_Comm_free(&comm);
    free(v);
    free(w);
    free(act);
    return mtest_finalize(0);
}
