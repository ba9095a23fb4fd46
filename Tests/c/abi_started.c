/* abi_started.c — the C ABI test's started calls (na_start, na_op_*, the event fd, na_client_dispatch): every done
 * exactly once, under valgrind, ASan and TSan; and a done that frees the client or dispatches (started_reentrant).
 * Part of abi_test (see abi_test.c). */
#define _POSIX_C_SOURCE 200809L
#include "abi_test.h"
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- Started calls (na_start): every done exactly once, under valgrind, ASan and TSan ---------------------- */

struct tally {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
    int twice;      /* a completion seen more than once */
    int bad_doc;    /* a document without "v":1 */
    pthread_t last_thread;
};

struct started {
    struct tally *tally;
    int seen;
    int rc;
    int cancelled;  /* the error code was "cancelled" */
};

static void on_done(int rc, const char *result_json, void *user_data) {
    struct started *s = user_data;
    pthread_mutex_lock(&s->tally->lock);
    if (s->seen) s->tally->twice++;
    s->seen++;
    s->rc = rc;
    s->cancelled = result_json && strstr(result_json, "\"code\":\"cancelled\"") != NULL;
    if (!result_json || !strstr(result_json, "\"v\":1")) s->tally->bad_doc++;
    s->tally->done++;
    s->tally->last_thread = pthread_self();
    pthread_cond_broadcast(&s->tally->cond);
    pthread_mutex_unlock(&s->tally->lock);
}

/* Waits (bounded) until `n` completions arrived. */
static int wait_done(struct tally *t, int n) {
    struct timespec until;
    int ok;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&t->lock);
    while (t->done < n) {
        if (pthread_cond_timedwait(&t->cond, &t->lock, &until) != 0) break;
    }
    ok = t->done >= n;
    pthread_mutex_unlock(&t->lock);
    return ok;
}

static const char *CALLS[] = {"client_info", "sign_in", "sign_up", "reset_password", "flow_submit",
                              "sign_in_interactive", "sign_in_device_code", "get_access_token", "call_api",
                              "get_account", "get_accounts", "sign_out", "dpop_proof"};
#define NCALLS ((int)(sizeof CALLS / sizeof CALLS[0]))
static const char *REQUESTS[] = {NULL, "{", "{\"username\":\"\xc3\x28\"}", "[1]", "{\"scopes\":42}",
                                 "{\"username\":\"a@b.c\",\"password\":\"pw\"}", "{\"flow\":\"nope\",\"code\":\"1\"}",
                                 "{\"url\":\"http://127.0.0.1:9/api\",\"scopes\":[\"s\"]}", "{}"};
#define NREQUESTS ((int)(sizeof REQUESTS / sizeof REQUESTS[0]))

void started_calls(void) {
    struct tally t = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0};
    struct started s[NCALLS * NREQUESTS], never = {&t, 0, 0, 0};
    na_client *c = NULL, *d = NULL;
    na_op *op = (na_op *)0x1, *ops[NCALLS * NREQUESTS];
    int i, n = 0, fd = -1, rc;
    char *huge;
    memset(s, 0, sizeof s);

    /* refused at once, done never runs */
    CHECK(na_client_new(GOOD, &c, NULL) == NA_OK, "client for started calls");
    CHECK(na_start(NULL, "sign_in", "{}", on_done, &never, &op) == NA_EINVAL && op == NULL, "NULL client");
    CHECK(na_start(c, NULL, "{}", on_done, &never, &op) == NA_EINVAL, "NULL call name");
    CHECK(na_start(c, "sign_in", "{}", NULL, &never, &op) == NA_EINVAL, "NULL done");
    CHECK(na_start(c, "na_sign_in", "{}", on_done, &never, &op) == NA_EINVAL, "unknown call name");
    CHECK(na_start(c, "\xff\xfe", "{}", on_done, &never, &op) == NA_EINVAL, "invalid UTF-8 call name");
    CHECK(na_op_cancel(NULL) == NA_EINVAL, "cancel NULL");
    na_op_free(NULL);
    CHECK(na_client_event_fd(c, NULL) == NA_EINVAL, "NULL fd_out");
    CHECK(na_client_dispatch(NULL) == NA_EINVAL, "dispatch NULL");

    /* every call with every kind of request, on the workers; a 10 MB request too */
    for (i = 0; i < NCALLS * NREQUESTS; i++) {
        s[i].tally = &t;
        rc = na_start(c, CALLS[i % NCALLS], REQUESTS[i / NCALLS], on_done, &s[i], &ops[i]);
        CHECK(rc == NA_OK, "started");
        if (rc == NA_OK) n++;
    }
    huge = malloc(10u * 1024u * 1024u + 1);
    if (huge) {
        struct started big = {&t, 0, 0, 0};
        memset(huge, 'a', 10u * 1024u * 1024u);
        huge[10u * 1024u * 1024u] = '\0';
        CHECK(na_start(c, "sign_in", huge, on_done, &big, NULL) == NA_OK, "a 10 MB request is started");
        free(huge); /* copied: may go at once */
        CHECK(wait_done(&t, n + 1), "every started call completed");
        CHECK(big.rc == NA_EINVAL, "the 10 MB request refused by the call");
        n++;
    }
    CHECK(wait_done(&t, n), "every started call completed");
    for (i = 0; i < NCALLS * NREQUESTS; i++) {
        CHECK(s[i].seen == 1, "done ran exactly once");
        CHECK(na_op_cancel(ops[i]) == NA_ESTATE, "cancel after completion: too late");
        na_op_free(ops[i]);
        CHECK(na_op_cancel(ops[i]) == NA_EINVAL, "a freed op is detected");
        na_op_free(ops[i]);
    }

    /* cancel right after start: NA_OK means the call ends "cancelled" */
    for (i = 0; i < 20; i++) {
        struct started one = {&t, 0, 0, 0};
        int before = t.done;
        CHECK(na_start(c, "sign_in", "{\"username\":\"a@b.c\",\"password\":\"pw\"}", on_done, &one, &op) == NA_OK,
              "started for cancel");
        rc = na_op_cancel(op);
        CHECK(rc == NA_OK || rc == NA_ESTATE, "cancel answers OK or too late");
        CHECK(wait_done(&t, before + 1), "the cancelled call completed");
        if (rc == NA_OK) CHECK(one.rc == NA_ESTATE && one.cancelled, "an accepted cancel ends with cancelled");
        na_op_free(op);
    }

    /* event fd: completions only inside na_client_dispatch, on this thread */
    CHECK(na_client_new(GOOD, &d, NULL) == NA_OK, "client for the event fd");
    CHECK(na_client_event_fd(d, &fd) == NA_OK && fd >= 0, "event fd");
    {
        struct tally u = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0, 0};
        struct started e[24];
        int ran = 0, rounds = 0;
        memset(e, 0, sizeof e);
        for (i = 0; i < 24; i++) {
            e[i].tally = &u;
            CHECK(na_start(d, CALLS[i % NCALLS], "{}", on_done, &e[i], NULL) == NA_OK, "started (event fd)");
        }
        while (ran < 24 && rounds++ < 600) {
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, 100) > 0) ran += na_client_dispatch(d);
        }
        CHECK(ran == 24 && u.done == 24, "every completion dispatched");
        CHECK(pthread_equal(u.last_thread, pthread_self()), "done ran on the dispatching thread");
        CHECK(u.twice == 0 && u.bad_doc == 0, "once each, documents");
    }

    /* freeing clients with calls in flight: every done has run when na_client_free returns */
    {
        int before = t.done;
        struct started f[30];
        memset(f, 0, sizeof f);
        for (i = 0; i < 30; i++) {
            f[i].tally = &t;
            CHECK(na_start(i % 2 ? c : d, CALLS[i % NCALLS], REQUESTS[5], on_done, &f[i], NULL) == NA_OK,
                  "started before free");
        }
        na_client_free(c);
        na_client_free(d);
        CHECK(t.done == before + 30, "every done ran before na_client_free returned");
        for (i = 0; i < 30; i++) CHECK(f[i].seen == 1, "once");
        CHECK(na_start(c, "client_info", "{}", on_done, &never, NULL) == NA_EINVAL, "freed client refused");
        CHECK(na_client_dispatch(d) == NA_EINVAL, "dispatch on a freed client");
    }
    CHECK(never.seen == 0, "refused calls never complete");
    CHECK(t.twice == 0 && t.bad_doc == 0, "every done once, every document a v:1 document");
}


/* ---- A done that frees the client, dispatches, or starts a call -------------------------------------------------
 * NWAIT completions wait together; the first done to run frees the client (from na_client_dispatch, or from the
 * na_client_free that delivers them), calls na_client_dispatch, or starts one more call. The host frees every
 * user_data as soon as its na_client_free returns, as the header allows: a done run after that is counted late, and
 * reads freed memory (ASan and valgrind report it). */

#define NWAIT 4

enum reentry { FREE_IN_DISPATCH, FREE_IN_FREE, FREE_IN_FREE_QUEUED, DISPATCH_IN_DISPATCH, START_IN_DISPATCH };

struct call_data {
    int index;
    int seen;
};

/* One case's state. A done looks here (under R_lock) before it touches its user_data, which may be freed. */
static pthread_mutex_t R_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    enum reentry mode;
    na_client *client;
    int fd;
    struct call_data *data[NWAIT + 1];
    int runs;           /* dones run */
    int free_returned;  /* the na_client_free called from the first done returned */
    int runs_at_return; /* dones run by then */
    int late;           /* dones run after that */
    int inner;          /* what na_start or na_client_dispatch answered inside the first done */
    int bad_doc;
} R;

/* Holds the first na_client_info's log callback (on a worker) until the first done opens it. */
static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int armed, entered, open;
} G = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0};

static void gate_log(int level, const char *message, const char *correlation_id, void *user) {
    (void)level;
    (void)correlation_id;
    (void)user;
    if (!message || !strstr(message, "na_client_info")) return;
    pthread_mutex_lock(&G.lock);
    if (G.armed) {
        G.armed = 0;
        G.entered = 1;
        pthread_cond_broadcast(&G.cond);
        while (!G.open) pthread_cond_wait(&G.cond, &G.lock);
    }
    pthread_mutex_unlock(&G.lock);
}

static void open_gate(void) {
    pthread_mutex_lock(&G.lock);
    G.open = 1;
    pthread_cond_broadcast(&G.cond);
    pthread_mutex_unlock(&G.lock);
}

/* Waits (bounded) until the gate holds a worker. */
static int gate_entered(void) {
    struct timespec until;
    int ok;
    clock_gettime(CLOCK_REALTIME, &until);
    until.tv_sec += 60;
    pthread_mutex_lock(&G.lock);
    while (!G.entered && pthread_cond_timedwait(&G.cond, &G.lock, &until) == 0) {
    }
    ok = G.entered;
    pthread_mutex_unlock(&G.lock);
    return ok;
}

/* The completions waiting for na_client_dispatch since it last ran: the event fd's counter (one per completion),
 * read without consuming it, from /proc/self/fdinfo; -1 when unreadable. */
static long waiting_count(int fd) {
    char path[64], line[128];
    unsigned long n = 0;
    long found = -1;
    FILE *f;
    snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
    f = fopen(path, "r");
    if (!f) return -1;
    while (found < 0 && fgets(line, sizeof line, f))
        if (sscanf(line, "eventfd-count: %lx", &n) == 1) found = (long)n;
    fclose(f);
    return found;
}

/* Waits (bounded, looking every millisecond) until `n` completions wait. */
static int wait_waiting(int fd, long n) {
    struct timespec ms = {0, 1000000};
    int i;
    for (i = 0; i < 60000; i++) {
        long now = waiting_count(fd);
        if (now < 0) return 0;
        if (now >= n) return 1;
        nanosleep(&ms, NULL);
    }
    return 0;
}

static void on_done_reentrant(int rc, const char *result_json, void *user_data);

static int start_one(int index) {
    R.data[index] = calloc(1, sizeof *R.data[index]);
    if (!R.data[index]) return NA_ENOMEM;
    R.data[index]->index = index;
    return na_start(R.client, "client_info", "{}", on_done_reentrant, R.data[index], NULL);
}

static void free_all_data(void) {
    int i;
    for (i = 0; i <= NWAIT; i++) {
        free(R.data[i]);
        R.data[i] = NULL;
    }
}

/* What the first done does (without R_lock: a done on another thread may need it meanwhile). */
static void first_done(void) {
    switch (R.mode) {
    case FREE_IN_DISPATCH:
        R.inner = start_one(NWAIT); /* started, then the free: its done too runs before na_client_free returns */
        /* fall through */
    case FREE_IN_FREE:
    case FREE_IN_FREE_QUEUED:
        open_gate();
        na_client_free(R.client);
        pthread_mutex_lock(&R_lock);
        R.free_returned = 1;
        R.runs_at_return = R.runs;
        pthread_mutex_unlock(&R_lock);
        free_all_data(); /* the host's clean-up, this done's own user_data included (not touched again) */
        break;
    case DISPATCH_IN_DISPATCH:
        R.inner = na_client_dispatch(R.client);
        break;
    case START_IN_DISPATCH:
        R.inner = start_one(NWAIT);
        /* its completion arrives while this dispatch runs (the dispatch cleared the counter) */
        if (R.inner == NA_OK && !wait_waiting(R.fd, 1)) R.inner = -100;
        break;
    }
}

static void on_done_reentrant(int rc, const char *result_json, void *user_data) {
    struct call_data *d = user_data;
    int first;
    (void)rc;
    pthread_mutex_lock(&R_lock);
    if (R.free_returned) R.late++;
    first = R.runs++ == 0;
    if (!result_json || !strstr(result_json, "\"v\":1")) R.bad_doc++;
    pthread_mutex_unlock(&R_lock);
    d->seen++; /* a late done's user_data is freed: ASan and valgrind stop here */
    if (first) first_done();
}

/* NWAIT client_info calls, their completions waiting together (event-fd mode), or, for FREE_IN_FREE_QUEUED, one
 * held in its log callback on the only worker and the others queued behind it. */
static int set_up(enum reentry mode) {
    static const char *ONE_WORKER = "{\"v\":1,\"authority\":\"http://127.0.0.1:9/contoso.onmicrosoft.com\","
                                    "\"client_id\":\"00001111-aaaa-2222-bbbb-3333cccc4444\",\"async_workers\":1}";
    int i, ok = 1;
    memset(&R, 0, sizeof R);
    R.mode = mode;
    R.fd = -1;
    if (mode == FREE_IN_FREE_QUEUED) {
        G.armed = 1;
        G.entered = 0;
        G.open = 0;
        CHECK(na_client_new(ONE_WORKER, &R.client, NULL) == NA_OK, "client with one worker");
        CHECK(na_client_set_log_callback(R.client, NA_LOG_VERBOSE, gate_log, NULL) == NA_OK, "log callback");
    } else {
        CHECK(na_client_new(GOOD, &R.client, NULL) == NA_OK, "client (event fd)");
        CHECK(na_client_event_fd(R.client, &R.fd) == NA_OK, "event fd");
    }
    for (i = 0; i < NWAIT; i++) ok &= start_one(i) == NA_OK;
    CHECK(ok, "started");
    if (mode == FREE_IN_FREE_QUEUED) {
        ok &= gate_entered();
        CHECK(ok, "a worker held in the log callback");
    } else {
        ok &= wait_waiting(R.fd, NWAIT);
        CHECK(ok, "completions waiting together (the event fd's count in /proc/self/fdinfo)");
    }
    return ok;
}

static void reentrant_case(enum reentry mode) {
    struct pollfd p;
    int i, ran;
    if (!set_up(mode)) {
        open_gate();
        na_client_free(R.client);
        free_all_data();
        return;
    }
    switch (mode) {
    case FREE_IN_DISPATCH:
        ran = na_client_dispatch(R.client);
        CHECK(R.inner == NA_OK && ran >= 1, "dispatch ran the done that freed the client");
        CHECK(R.free_returned && R.runs_at_return == NWAIT + 1 && R.late == 0,
              "free from a dispatched done: every other done ran before na_client_free returned");
        break;
    case FREE_IN_FREE:
    case FREE_IN_FREE_QUEUED:
        na_client_free(R.client);
        CHECK(R.free_returned && R.runs_at_return == NWAIT && R.late == 0,
              mode == FREE_IN_FREE ? "free from a done run by na_client_free: every other done ran before it returned"
                                   : "free from a done of a queued call: every other done ran before it returned");
        break;
    case DISPATCH_IN_DISPATCH:
        ran = na_client_dispatch(R.client);
        CHECK(R.inner == NWAIT - 1 && ran == 1, "a dispatch from a done runs the others; the outer one none again");
        for (i = 0; i < NWAIT; i++) CHECK(R.data[i]->seen == 1, "dispatch in dispatch: each done once");
        na_client_free(R.client);
        free_all_data();
        break;
    case START_IN_DISPATCH:
        ran = na_client_dispatch(R.client);
        CHECK(R.inner == NA_OK && ran == NWAIT, "a call started from a done: not run by the same dispatch");
        p.fd = R.fd;
        p.events = POLLIN;
        p.revents = 0;
        CHECK(poll(&p, 1, 0) == 1, "the event fd is readable for it");
        CHECK(na_client_dispatch(R.client) == 1, "the next dispatch runs it");
        for (i = 0; i <= NWAIT; i++) CHECK(R.data[i]->seen == 1, "start in dispatch: each done once");
        na_client_free(R.client);
        free_all_data();
        break;
    }
    CHECK(R.bad_doc == 0, "every document a v:1 document");
}

void started_reentrant(void) {
    reentrant_case(FREE_IN_DISPATCH);
    reentrant_case(FREE_IN_FREE);
    reentrant_case(FREE_IN_FREE_QUEUED);
    reentrant_case(DISPATCH_IN_DISPATCH);
    reentrant_case(START_IN_DISPATCH);
}
