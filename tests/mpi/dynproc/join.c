/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Comm_join over a TCP socket between world ranks 0 and 1: each gets an intercommunicator
 * whose remote group is the other process; messages cross it both ways; disconnect. The
 * socket is left open and usable, as the standard requires.
 */
#include "mtest.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    mtest_init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int fd = -1;
    if (rank == 0) {
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t alen = sizeof(a);
        int ok = lfd >= 0 && bind(lfd, (struct sockaddr *)&a, sizeof(a)) == 0 &&
                 listen(lfd, 1) == 0 && getsockname(lfd, (struct sockaddr *)&a, &alen) == 0;
        MTEST_CHECK(ok, "cannot listen on the loopback interface");
        int tcp_port = ok ? ntohs(a.sin_port) : -1;
        if (size > 1)
            MPI_Send(&tcp_port, 1, MPI_INT, 1, 0, MPI_COMM_WORLD);
        if (ok && size > 1)
            fd = accept(lfd, NULL, NULL);
        if (lfd >= 0)
            close(lfd);
    } else if (rank == 1) {
        int tcp_port = -1;
        MPI_Recv(&tcp_port, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)tcp_port)};
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        if (tcp_port < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
            MTEST_CHECK(0, "cannot connect to rank 0's socket");
            close(fd);
            fd = -1;
        }
    }
    if (rank < 2 && size > 1 && fd >= 0) {
        MPI_Comm inter;
        int rc = MPI_Comm_join(fd, &inter);
        MTEST_CHECK(rc == MPI_SUCCESS, "join failed");
        if (rc == MPI_SUCCESS) {
            int flag = 0, lsize = 0, rsize = 0;
            MPI_Comm_test_inter(inter, &flag);
            MPI_Comm_size(inter, &lsize);
            MPI_Comm_remote_size(inter, &rsize);
            MTEST_CHECK(flag && lsize == 1 && rsize == 1, "inter %d sizes %d %d", flag, lsize,
                        rsize);
            int mine = 1000 + rank, theirs = -1;
            MPI_Sendrecv(&mine, 1, MPI_INT, 0, 5, &theirs, 1, MPI_INT, 0, 5, inter,
                         MPI_STATUS_IGNORE);
            MTEST_CHECK(theirs == 1000 + (1 - rank), "got %d", theirs);
            MPI_Comm_disconnect(&inter);
            /* the socket still works (MPI-4.1 section 11.8.4: it is quiescent after the
             * call); MPICH 5.0.2 leaves it unusable */
            char c = (char)('a' + rank), d = 0;
            if (mtest_is_manifold())
                MTEST_CHECK(write(fd, &c, 1) == 1 && read(fd, &d, 1) == 1 && d == 'a' + 1 - rank,
                            "the socket after the join");
        }
    }
    if (fd >= 0)
        close(fd);
    return mtest_finalize(0);
}
