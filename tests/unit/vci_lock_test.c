/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The VCI lock (vci.h): biased to the first thread that takes it, revoked by the first other
 * thread. Checks the states a single thread sees (after a trylock revoked the bias while the
 * owner was inside, the next entry must still wait for it), then mutual exclusion while a second
 * thread revokes the bias in the middle of the owner's run (by blocking entry and by trylock): a
 * plain counter must lose no increment and no two threads may be inside at once. Without membarrier
 * (or under ThreadSanitizer, which cannot see its ordering) the same runs check the plain lock.
 */
#include "unit.h"
#include "vci.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#define ROUNDS 400000

static int bias;     /* locks may be biased here (mf_vci_lock_bias_init) */
static long counter; /* plain: only the lock protects it */
static atomic_int inside, overlaps, owner_rounds;
static int use_trylock;

static void enter(mf_vci_lock_t *l)
{
    if (mf_vci_lock_try_biased(l))
        return;
    if (use_trylock) {
        while (!mf_vci_lock_enter(l, 0, bias, NULL))
            ;
        return;
    }
    mf_vci_lock_enter(l, 1, bias, NULL);
}

/* No read-modify-write in here: its barrier would hide a missing one in the lock. */
static void critical(void)
{
    if (atomic_load_explicit(&inside, memory_order_relaxed))
        atomic_fetch_add(&overlaps, 1);
    atomic_store_explicit(&inside, 1, memory_order_relaxed);
    counter++;
    atomic_store_explicit(&inside, 0, memory_order_relaxed);
}

static void *owner_main(void *arg)
{
    mf_vci_lock_t *l = arg;
    for (int i = 0; i < ROUNDS; i++) {
        enter(l);
        critical();
        mf_vci_lock_release(l);
        atomic_store_explicit(&owner_rounds, i + 1, memory_order_relaxed);
    }
    return NULL;
}

static void *other_main(void *arg)
{
    mf_vci_lock_t *l = arg;
    /* start once the owner is well into its run, so the revocation meets it there */
    while (atomic_load_explicit(&owner_rounds, memory_order_relaxed) < ROUNDS / 8)
        ;
    for (int i = 0; i < ROUNDS; i++) {
        enter(l);
        critical();
        mf_vci_lock_release(l);
    }
    return NULL;
}

static void two_threads(int trylock)
{
    mf_vci_lock_t l;
    memset(&l, 0, sizeof(l));
    counter = 0;
    atomic_store(&overlaps, 0);
    atomic_store(&owner_rounds, 0);
    use_trylock = trylock;
    pthread_t a, b;
    pthread_create(&a, NULL, owner_main, &l);
    pthread_create(&b, NULL, other_main, &l);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    UNIT_CHECK(counter == 2L * ROUNDS, "trylock %d: %ld increments of %d", trylock, counter,
               2 * ROUNDS);
    UNIT_CHECK(atomic_load(&overlaps) == 0, "trylock %d: two threads inside %d times", trylock,
               atomic_load(&overlaps));
    UNIT_CHECK(atomic_load(&l.revoked) == bias, "trylock %d: revoked %d", trylock,
               (int)atomic_load(&l.revoked));
    UNIT_CHECK(atomic_load(&l.word) == 0 && atomic_load(&l.owner_in) == 0,
               "trylock %d: left held (word %d, owner_in %d)", trylock, atomic_load(&l.word),
               (int)atomic_load(&l.owner_in));
}

static void *try_from_other(void *arg)
{
    mf_vci_lock_t *l = arg;
    intptr_t got = mf_vci_lock_enter(l, 0, 1, NULL);
    if (got)
        mf_vci_lock_release(l);
    return (void *)got;
}

static atomic_int got_in;

static void *enter_from_other(void *arg)
{
    mf_vci_lock_t *l = arg;
    mf_vci_lock_enter(l, 1, 1, NULL);
    atomic_store(&got_in, 1);
    mf_vci_lock_release(l);
    return NULL;
}

/* A lock claimed by this thread, held through the bias. */
static void claim_and_enter(mf_vci_lock_t *l)
{
    memset(l, 0, sizeof(*l));
    mf_vci_lock_enter(l, 1, 1, NULL);
    mf_vci_lock_release(l);
    UNIT_CHECK(mf_vci_lock_try_biased(l), "the owner did not come in through the bias");
    UNIT_CHECK(atomic_load(&l->word) == 0 && atomic_load(&l->owner_in) == 1,
               "biased entry: word %d, owner_in %d", atomic_load(&l->word),
               (int)atomic_load(&l->owner_in));
}

static void one_thread(void)
{
    mf_vci_lock_t l;
    memset(&l, 0, sizeof(l));
    /* a sweep's trylock does not claim */
    UNIT_CHECK(mf_vci_lock_enter(&l, 0, 0, NULL) == 1, "trylock of a free lock failed");
    UNIT_CHECK(atomic_load(&l.owner) == 0, "a trylock claimed the lock");
    mf_vci_lock_release(&l);
    /* the first blocking entry claims; the next ones come in through the bias */
    UNIT_CHECK(!mf_vci_lock_try_biased(&l), "an unclaimed lock let a thread in through the bias");
    mf_vci_lock_enter(&l, 1, bias, NULL);
    UNIT_CHECK(atomic_load(&l.word) == 1, "the claiming entry did not take the word");
    mf_vci_lock_release(&l);
    UNIT_CHECK(atomic_load(&l.word) == 0, "the word was not released");
    UNIT_CHECK((atomic_load(&l.owner) == mf_vci_thread_id()) == bias, "claimed: %d, bias %d",
               atomic_load(&l.owner) == mf_vci_thread_id(), bias);
    if (!bias)
        return;

    /* another thread's blocking entry while the owner is inside revokes and waits for it */
    claim_and_enter(&l);
    pthread_t t;
    atomic_store(&got_in, 0);
    pthread_create(&t, NULL, enter_from_other, &l);
    /* wait for the revocation (on a loaded machine the thread may start late), then give it
     * time to get in wrongly */
    struct timespec pause = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 3000 && !atomic_load(&l.revoked); i++)
        nanosleep(&pause, NULL);
    UNIT_CHECK(atomic_load(&l.revoked) == 1, "the waiting thread did not revoke the bias");
    nanosleep(&pause, NULL);
    UNIT_CHECK(atomic_load(&got_in) == 0, "another thread got in while the owner was inside");
    mf_vci_lock_release(&l);
    pthread_join(t, NULL);
    UNIT_CHECK(atomic_load(&got_in) == 1, "the waiting thread never got in");
    /* revoked: the owner now takes the word like everyone */
    UNIT_CHECK(!mf_vci_lock_try_biased(&l), "a revoked bias let the owner in");
    UNIT_CHECK(atomic_load(&l.owner_in) == 0, "a refused biased entry left owner_in set");
    mf_vci_lock_enter(&l, 1, 1, NULL);
    UNIT_CHECK(atomic_load(&l.word) == 1, "the owner's entry after revocation took no word");
    mf_vci_lock_release(&l);
    UNIT_CHECK(atomic_load(&l.word) == 0 && atomic_load(&l.owner_in) == 0,
               "the owner's release after revocation left word %d, owner_in %d",
               atomic_load(&l.word), (int)atomic_load(&l.owner_in));

    /* another thread's trylock while the owner is inside revokes but does not get in */
    claim_and_enter(&l);
    void *got;
    pthread_create(&t, NULL, try_from_other, &l);
    pthread_join(t, &got);
    UNIT_CHECK(got == NULL, "a trylock got in while the owner was inside");
    UNIT_CHECK(atomic_load(&l.revoked) == 1 && atomic_load(&l.word) == 0,
               "after the trylock: revoked %d, word %d", (int)atomic_load(&l.revoked),
               atomic_load(&l.word));
    /* the bias is gone but the owner is still inside: the next entry must not get in either */
    pthread_create(&t, NULL, try_from_other, &l);
    pthread_join(t, &got);
    UNIT_CHECK(got == NULL, "a second trylock got in while the owner was inside");
    mf_vci_lock_release(&l);
    UNIT_CHECK(atomic_load(&l.owner_in) == 0, "the owner's release left owner_in set");
    pthread_create(&t, NULL, try_from_other, &l);
    pthread_join(t, &got);
    UNIT_CHECK(got != NULL, "another thread's trylock of a free revoked lock failed");
}

int main(void)
{
    bias = mf_vci_lock_bias_init();
    printf("vci_lock_test: biased locks %s\n", bias ? "on" : "off (no membarrier or TSan)");
    one_thread();
    two_threads(0);
    two_threads(1);
    return unit_finish("vci_lock_test");
}
