/* bench.c — what an embedding program pays, measured through the C ABI: load time, client creation, sign-in and a
 * new scope set against the emulator, a cached token (1 thread; 8 threads sharing one client; with 1 and with 1,000
 * cached scope sets), and peak memory. Run by `make bench` (Tests/bench/bench.py starts the emulator and prints the
 * table beside MSAL for Python); it prints one JSON object per line and asserts nothing.
 *
 * Settings come from the environment: NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID, NATIVEAUTH_USERNAME,
 * NATIVEAUTH_PASSWORD, BENCH_SCOPE_PREFIX (scopes are PREFIX0000 … PREFIX0999), BENCH_SCOPE_SETS (default 1000),
 * BENCH_CALLS (default 200000), and for the file cache BENCH_CACHE_FILE (a cache of 1,000 accounts in MSAL's format,
 * whose load and save are measured; users are user<N>@contoso.com) and BENCH_CACHE_DIR (a private directory for a fresh
 * cache file the cache-hit row signs in with). The same file is also parsed and serialised by jansson alone —
 * NativeAuthJSON's parser — for the comparison that explains the cache's own scanner (MSALCacheFormat+Document.swift).
 * DPoP: BENCH_OIDC_AUTHORITY, BENCH_OIDC_CLIENT_ID, BENCH_OIDC_SCOPE, BENCH_OIDC_API and two cache files signed in at
 * the emulator's generic provider, BENCH_DPOP_CACHE (with "dpop") and BENCH_BEARER_CACHE (without). */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <dlfcn.h>
#include <jansson.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/sha.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef int (*op_fn)(void *, const char *, char **);
static int (*na_client_new)(const char *, void **, char **);
static void (*na_client_free)(void *);
static void (*na_string_free)(char *);
static op_fn na_sign_in, na_get_access_token, na_sign_out, na_call_api, na_dpop_proof;
typedef void (*done_fn)(int, const char *, void *);
static int (*na_start)(void *, const char *, const char *, done_fn, void *, void **);
static void (*na_op_free)(void *);
static int (*na_client_event_fd)(void *, int *);
static int (*na_client_dispatch)(void *);

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double percentile(double *v, size_t n, double p) {
    size_t i = (size_t)(p * (double)(n - 1));
    return v[i];
}

static const char *scope_prefix;
static char token_request[512];

/* Times `n` cached-token calls one by one into `lat` (nanoseconds). */
static void cached_calls(void *client, double *lat, size_t n) {
    char *out = NULL;
    size_t i;
    for (i = 0; i < n; i++) {
        double t0 = now_ns();
        int rc = na_get_access_token(client, token_request, &out);
        lat[i] = now_ns() - t0;
        if (rc != 0) { fprintf(stderr, "cached token failed: %s\n", out ? out : "?"); exit(1); }
        na_string_free(out);
    }
}

struct worker { void *client; double *lat; size_t n; };

static void *worker_main(void *arg) {
    struct worker *w = arg;
    cached_calls(w->client, w->lat, w->n);
    return NULL;
}

/* ---- Started calls: what na_start adds to a cached token, and 1,000 at once ---------------------------------- */

static pthread_mutex_t started_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t started_cond = PTHREAD_COND_INITIALIZER;
static long started_done;
static int started_failed;

static void on_started(int rc, const char *result, void *user) {
    (void)result;
    (void)user;
    pthread_mutex_lock(&started_lock);
    if (rc != 0) started_failed++;
    started_done++;
    pthread_cond_signal(&started_cond);
    pthread_mutex_unlock(&started_lock);
}

static void wait_started(long n) {
    pthread_mutex_lock(&started_lock);
    while (started_done < n) pthread_cond_wait(&started_cond, &started_lock);
    pthread_mutex_unlock(&started_lock);
}

static int thread_count(void) {
    int n = 0;
    DIR *d = opendir("/proc/self/task");
    struct dirent *e;
    if (!d) return -1;
    while ((e = readdir(d)) != NULL) n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void report_latency(const char *name, double *lat, size_t n, double wall_ns, int threads);

/* Round trips of one started cached-token call at a time: done on a worker (woken through a condition variable,
 * as a host thread waiting for it would be), then through the event fd (poll + na_client_dispatch on this thread). */
static void started_rows(void *client, double *lat, size_t n) {
    size_t i;
    int fd = -1;
    double t0 = now_ns();
    for (i = 0; i < n; i++) {
        long target = started_done + 1;
        double s = now_ns();
        if (na_start(client, "get_access_token", token_request, on_started, NULL, NULL) != 0) exit(1);
        wait_started(target);
        lat[i] = now_ns() - s;
    }
    report_latency("started_worker", lat, n, now_ns() - t0, 1);
    /* Back to back: n started, then waited for — what each costs the program when it does not wait in between. */
    {
        long target = started_done + (long)n;
        t0 = now_ns();
        for (i = 0; i < n; i++)
            if (na_start(client, "get_access_token", token_request, on_started, NULL, NULL) != 0) exit(1);
        wait_started(target);
        printf("{\"row\":\"started_pipelined_worker\",\"ns_per_call\":%.1f}\n", (now_ns() - t0) / (double)n);
    }
    if (na_client_event_fd(client, &fd) != 0) exit(1);  /* for good: this client's completions now wait for us */
    t0 = now_ns();
    for (i = 0; i < n; i++) {
        long target = started_done + 1;
        double s = now_ns();
        if (na_start(client, "get_access_token", token_request, on_started, NULL, NULL) != 0) exit(1);
        while (started_done < target) {
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, 1000) > 0) na_client_dispatch(client);
        }
        lat[i] = now_ns() - s;
    }
    report_latency("started_event_fd", lat, n, now_ns() - t0, 1);
    {
        long target = started_done + (long)n;
        t0 = now_ns();
        for (i = 0; i < n; i++)
            if (na_start(client, "get_access_token", token_request, on_started, NULL, NULL) != 0) exit(1);
        while (started_done < target) {
            struct pollfd p = {fd, POLLIN, 0};
            if (poll(&p, 1, 1000) > 0) na_client_dispatch(client);
        }
        printf("{\"row\":\"started_pipelined_event_fd\",\"ns_per_call\":%.1f}\n", (now_ns() - t0) / (double)n);
    }
}

/* 1,000 cached-token calls started at once on one client (worker mode): all complete; the threads stay bounded. */
static void started_burst(void *client) {
    long target = started_done + 1000;
    int k, before = thread_count(), peak = before;
    double t0 = now_ns();
    for (k = 0; k < 1000; k++) {
        if (na_start(client, "get_access_token", token_request, on_started, NULL, NULL) != 0) exit(1);
        if (k % 100 == 0 && thread_count() > peak) peak = thread_count();
    }
    wait_started(target);
    if (thread_count() > peak) peak = thread_count();
    printf("{\"row\":\"started_1000\",\"ms\":%.3f,\"failed\":%d,\"threads_before\":%d,\"threads_peak\":%d}\n",
           (now_ns() - t0) / 1e6, started_failed, before, peak);
}

static void report_latency(const char *name, double *lat, size_t n, double wall_ns, int threads) {
    qsort(lat, n, sizeof *lat, cmp_double);
    printf("{\"row\":\"%s\",\"threads\":%d,\"calls\":%zu,\"p50_ns\":%.1f,\"p99_ns\":%.1f,\"calls_per_s\":%.0f}\n", name,
           threads, n, percentile(lat, n, 0.50), percentile(lat, n, 0.99), (double)n / (wall_ns / 1e9));
    fflush(stdout);
}

static void *new_client_with(const char *authority, const char *client_id, const char *cache_path) {
    char config[4096], *err = NULL;
    void *c = NULL;
    if (cache_path)
        snprintf(config, sizeof config,
                 "{\"v\":1,\"authority\":\"%s\",\"client_id\":\"%s\",\"cache\":{\"type\":\"file\",\"path\":\"%s\"}}",
                 authority, client_id, cache_path);
    else
        snprintf(config, sizeof config, "{\"v\":1,\"authority\":\"%s\",\"client_id\":\"%s\"}", authority, client_id);
    if (na_client_new(config, &c, &err) != 0) { fprintf(stderr, "client: %s\n", err ? err : "?"); exit(1); }
    return c;
}

static void *new_client(const char *authority, const char *client_id) {
    return new_client_with(authority, client_id, NULL);
}

static double sign_in(void *c, const char *user, const char *password);

static void *oidc_client(const char *authority, const char *client_id, const char *cache_path, int dpop) {
    char config[4096], *err = NULL;
    void *c = NULL;
    snprintf(config, sizeof config,
             "{\"v\":1,\"authority\":\"%s\",\"authority_type\":\"oidc\",\"client_id\":\"%s\",\"dpop\":%s,"
             "\"cache\":{\"type\":\"file\",\"path\":\"%s\"}}",
             authority, client_id, dpop ? "true" : "false", cache_path);
    if (na_client_new(config, &c, &err) != 0) { fprintf(stderr, "client: %s\n", err ? err : "?"); exit(1); }
    return c;
}

/* CPU time of the calling thread: what a call costs this process, without the time the server takes. */
static double thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static double last_cpu_ns; /* the calling thread's CPU time of the last timed_op */

static void timed_op(void *c, op_fn op, const char *request, double *lat) {
    char *out = NULL;
    double t0 = now_ns(), c0 = thread_cpu_ns();
    int rc = op(c, request, &out);
    *lat = now_ns() - t0;
    last_cpu_ns = thread_cpu_ns() - c0;
    if (rc != 0 || (op == na_call_api && (!out || !strstr(out, "\"status\":200")))) {
        fprintf(stderr, "dpop row: %s\n", out ? out : "?");
        exit(1);
    }
    na_string_free(out);
}

/* The DPoP rows' yardstick: one ES256 signature by libcrypto alone, made as the library makes it, back to back. */
static void signature_row(double *lat, size_t n) {
    unsigned char input[600], digest[32], der[80];
    size_t i, length;
    double t0 = now_ns();
    EVP_PKEY *key = EVP_EC_gen("P-256");
    EVP_PKEY_CTX *prepared = key ? EVP_PKEY_CTX_new(key, NULL) : NULL;
    if (!prepared || EVP_PKEY_sign_init(prepared) != 1) { fprintf(stderr, "p256: no key\n"); exit(1); }
    memset(input, 'a', sizeof input);
    for (i = 0; i < n; i++) {
        double c0 = thread_cpu_ns();
        EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_dup(prepared);
        SHA256(input, sizeof input, digest);
        length = sizeof der;
        if (!ctx || EVP_PKEY_sign(ctx, der, &length, digest, sizeof digest) != 1) exit(1);
        EVP_PKEY_CTX_free(ctx);
        lat[i] = thread_cpu_ns() - c0;
    }
    report_latency("p256_sign_cpu", lat, n, now_ns() - t0, 1);
    EVP_PKEY_CTX_free(prepared);
    EVP_PKEY_free(key);
}

/* DPoP (RFC 9449): what a proof costs (na_dpop_proof with an access token: ES256 signature, SHA-256 of the token, the
 * document), and na_call_api to the emulator's API over loopback with a cached DPoP token (a fresh proof; the API
 * verifies it) beside one with a cached bearer token, interleaved so that both see the same machine. */
static void dpop_rows(double *lat, size_t n) {
    const char *authority = getenv("BENCH_OIDC_AUTHORITY"), *client_id = getenv("BENCH_OIDC_CLIENT_ID");
    const char *scope = getenv("BENCH_OIDC_SCOPE"), *api = getenv("BENCH_OIDC_API");
    const char *dpop_cache = getenv("BENCH_DPOP_CACHE"), *bearer_cache = getenv("BENCH_BEARER_CACHE");
    char proof[1024], call[1024];
    size_t i, calls = 2000;
    double t0, *lat_bearer = lat + calls, *cpu_bearer = lat + 2 * calls, *cpu_dpop = lat + 3 * calls;
    double *added = lat + 4 * calls; /* each pair's DPoP call minus its bearer call */
    void *dpop, *bearer;
    if (!authority || !client_id || !scope || !api || !dpop_cache || !bearer_cache || !na_dpop_proof) return;
    dpop = oidc_client(authority, client_id, dpop_cache, 1);
    bearer = oidc_client(authority, client_id, bearer_cache, 0);
    snprintf(proof, sizeof proof, "{\"method\":\"GET\",\"url\":\"%s\",\"access_token\":\"%s\"}", api,
             "oat_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_AbCdEf"); /* a token of the emulator's length */
    snprintf(call, sizeof call, "{\"url\":\"%s\",\"scopes\":[\"%s\"]}", api, scope);
    for (i = 0; i < n / 10; i++) timed_op(dpop, na_dpop_proof, proof, &lat[i]);
    t0 = now_ns();
    for (i = 0; i < n; i++) timed_op(dpop, na_dpop_proof, proof, &lat[i]);
    report_latency("dpop_proof", lat, n, now_ns() - t0, 1);
    for (i = 0; i < 100; i++) {
        timed_op(bearer, na_call_api, call, &lat[0]);
        timed_op(dpop, na_call_api, call, &lat[0]);
    }
    t0 = now_ns();
    for (i = 0; i < calls; i++) {
        timed_op(bearer, na_call_api, call, &lat_bearer[i]);
        cpu_bearer[i] = last_cpu_ns;
        timed_op(dpop, na_call_api, call, &lat[i]);
        cpu_dpop[i] = last_cpu_ns;
    }
    report_latency("call_api_bearer", lat_bearer, calls, now_ns() - t0, 1);
    report_latency("call_api_dpop", lat, calls, now_ns() - t0, 1);
    /* The library's own share (the round trip to the emulator, which checks the proof, is not in it). */
    for (i = 0; i < calls; i++) added[i] = cpu_dpop[i] - cpu_bearer[i];
    report_latency("call_api_bearer_cpu", cpu_bearer, calls, now_ns() - t0, 1);
    report_latency("call_api_dpop_cpu", cpu_dpop, calls, now_ns() - t0, 1);
    report_latency("call_api_dpop_added_cpu", added, calls, now_ns() - t0, 1);
    signature_row(added, calls);
    na_client_free(dpop);
    na_client_free(bearer);
}

/* jansson over the cache file: json_loadb (the parse NativeAuthJSON starts from, before it converts any value to
 * Swift) and json_dumps compact (the least a writer through NativeAuthJSON would pay, without file I/O). */
static void jansson_rows(const char *file) {
    FILE *f = fopen(file, "rb");
    double load[21], dump[21], t0;
    char *text, *out;
    long n;
    int k;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET) != 0) exit(1);
    text = malloc((size_t)n);
    if (!text || fread(text, 1, (size_t)n, f) != (size_t)n) exit(1);
    fclose(f);
    for (k = 0; k < 21; k++) {
        json_error_t error;
        json_t *root;
        t0 = now_ns();
        root = json_loadb(text, (size_t)n, JSON_DECODE_ANY | JSON_ALLOW_NUL, &error);
        load[k] = now_ns() - t0;
        if (!root) { fprintf(stderr, "jansson: %s\n", error.text); exit(1); }
        t0 = now_ns();
        out = json_dumps(root, JSON_COMPACT);
        dump[k] = now_ns() - t0;
        free(out);
        json_decref(root);
    }
    free(text);
    qsort(load, 21, sizeof *load, cmp_double);
    qsort(dump, 21, sizeof *dump, cmp_double);
    printf("{\"row\":\"file_load_jansson\",\"ms\":%.3f}\n", load[10] / 1e6);
    printf("{\"row\":\"file_save_jansson\",\"ms\":%.3f}\n", dump[10] / 1e6);
}

/* The file cache: load (na_client_new over a file of 1,000 accounts), save (a sign-out of one account: lock, apply,
 * write, fsync, rename), and the cache hit of a client whose cache is a file. */
static void file_cache_rows(const char *authority, const char *client_id, const char *user, const char *password,
                            double *lat, size_t calls) {
    const char *file = getenv("BENCH_CACHE_FILE"), *dir = getenv("BENCH_CACHE_DIR");
    char path[2048], request[256], *out = NULL;
    double samples[32], t0;
    void *c;
    int k;
    if (!file || !dir) return;
    for (k = 0; k < 21; k++) {
        t0 = now_ns();
        c = new_client_with(authority, client_id, file);
        samples[k] = now_ns() - t0;
        na_client_free(c);
    }
    qsort(samples, 21, sizeof *samples, cmp_double);
    printf("{\"row\":\"file_load\",\"ms\":%.3f}\n", samples[10] / 1e6);
    jansson_rows(file);
    /* The first write after a load also pays for first-touch memory; the median of the next 21 is the steady cost. */
    c = new_client_with(authority, client_id, file);
    for (k = 0; k < 22; k++) {
        snprintf(request, sizeof request, "{\"account\":\"user%d@contoso.com\"}", k);
        t0 = now_ns();
        if (na_sign_out(c, request, &out) != 0) { fprintf(stderr, "sign-out: %s\n", out ? out : "?"); exit(1); }
        t0 = now_ns() - t0;
        if (k == 0) printf("{\"row\":\"file_save_first\",\"ms\":%.3f}\n", t0 / 1e6);
        else samples[k - 1] = t0;
        na_string_free(out);
    }
    na_client_free(c);
    qsort(samples, 21, sizeof *samples, cmp_double);
    printf("{\"row\":\"file_save\",\"ms\":%.3f}\n", samples[10] / 1e6);

    snprintf(path, sizeof path, "%s/hit.json", dir);
    c = new_client_with(authority, client_id, path);
    sign_in(c, user, password);
    cached_calls(c, lat, calls / 10);
    t0 = now_ns();
    cached_calls(c, lat, calls);
    report_latency("cached_1_thread_file", lat, calls, now_ns() - t0, 1);
    na_client_free(c);
}

static double sign_in(void *c, const char *user, const char *password) {
    char request[1024], *out = NULL;
    double t0;
    snprintf(request, sizeof request, "{\"username\":\"%s\",\"password\":\"%s\",\"scopes\":[\"%s0000\"]}", user,
             password, scope_prefix);
    t0 = now_ns();
    if (na_sign_in(c, request, &out) != 0) { fprintf(stderr, "sign-in failed: %s\n", out ? out : "?"); exit(1); }
    t0 = now_ns() - t0;
    na_string_free(out);
    return t0;
}

#define LOAD(name) (*(void **)(&name) = dlsym(lib, #name))

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "libnativeauth.so";
    const char *authority = getenv("NATIVEAUTH_AUTHORITY"), *client_id = getenv("NATIVEAUTH_CLIENT_ID");
    const char *user = getenv("NATIVEAUTH_USERNAME"), *password = getenv("NATIVEAUTH_PASSWORD");
    size_t calls = getenv("BENCH_CALLS") ? (size_t)atol(getenv("BENCH_CALLS")) : 200000;
    int sets = getenv("BENCH_SCOPE_SETS") ? atoi(getenv("BENCH_SCOPE_SETS")) : 1000;
    void *lib, *client;
    double t0, *lat, samples[32];
    int k;
    struct rusage ru;

    scope_prefix = getenv("BENCH_SCOPE_PREFIX");
    if (!authority || !client_id || !user || !password || !scope_prefix) {
        fprintf(stderr, "set NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID, NATIVEAUTH_USERNAME, NATIVEAUTH_PASSWORD, "
                        "BENCH_SCOPE_PREFIX\n");
        return 2;
    }
    t0 = now_ns();
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    printf("{\"row\":\"dlopen\",\"ms\":%.3f}\n", (now_ns() - t0) / 1e6);
    LOAD(na_client_new); LOAD(na_client_free); LOAD(na_string_free); LOAD(na_sign_in); LOAD(na_get_access_token);
    LOAD(na_sign_out); LOAD(na_call_api); LOAD(na_dpop_proof);
    LOAD(na_start); LOAD(na_op_free); LOAD(na_client_event_fd); LOAD(na_client_dispatch);

    t0 = now_ns();
    for (k = 0; k < 1000; k++) na_client_free(new_client(authority, client_id));
    printf("{\"row\":\"client_new_free\",\"us\":%.3f}\n", (now_ns() - t0) / 1e3 / 1000);

    /* Sign-in (initiate, challenge, token): the median of several. */
    client = new_client(authority, client_id);
    for (k = 0; k < 15; k++) samples[k] = sign_in(client, user, password);
    qsort(samples, 15, sizeof *samples, cmp_double);
    printf("{\"row\":\"sign_in\",\"ms\":%.3f}\n", samples[7] / 1e6);

    snprintf(token_request, sizeof token_request, "{\"scopes\":[\"%s0000\"]}", scope_prefix);
    lat = malloc(sizeof *lat * calls * 8);
    if (!lat) return 1;

    /* One thread, one cached scope set. */
    cached_calls(client, lat, calls / 10); /* warm-up */
    t0 = now_ns();
    cached_calls(client, lat, calls);
    report_latency("cached_1_thread", lat, calls, now_ns() - t0, 1);

    /* Eight threads sharing the client. */
    {
        pthread_t t[8];
        struct worker w[8];
        for (k = 0; k < 8; k++) { w[k].client = client; w[k].lat = lat + (size_t)k * calls; w[k].n = calls; }
        t0 = now_ns();
        for (k = 0; k < 8; k++) pthread_create(&t[k], NULL, worker_main, &w[k]);
        for (k = 0; k < 8; k++) pthread_join(t[k], NULL);
        report_latency("cached_8_threads", lat, calls * 8, now_ns() - t0, 8);
    }

    /* Started calls (worker pool, then the event fd on a second client signed in the same way). */
    started_burst(client);
    {
        void *second = new_client(authority, client_id);
        size_t n = calls / 10 < 20000 ? calls / 10 : 20000;
        sign_in(second, user, password);
        cached_calls(second, lat, 1000);
        t0 = now_ns();
        cached_calls(second, lat, n);
        report_latency("cached_1_thread_again", lat, n, now_ns() - t0, 1);
        started_rows(second, lat, n);
        na_client_free(second);
    }

    /* A new scope set (one refresh-token round trip) each, up to `sets` cached scope sets. */
    {
        double *fresh = malloc(sizeof *fresh * (size_t)sets);
        char request[512], *out = NULL;
        if (!fresh) return 1;
        for (k = 1; k < sets; k++) {
            snprintf(request, sizeof request, "{\"scopes\":[\"%s%04d\"]}", scope_prefix, k);
            t0 = now_ns();
            if (na_get_access_token(client, request, &out) != 0) {
                fprintf(stderr, "new scope set failed: %s\n", out ? out : "?");
                return 1;
            }
            fresh[k - 1] = now_ns() - t0;
            na_string_free(out);
        }
        if (sets > 1) {
            qsort(fresh, (size_t)sets - 1, sizeof *fresh, cmp_double);
            printf("{\"row\":\"new_scope_set\",\"ms\":%.3f}\n", fresh[(sets - 1) / 2] / 1e6);
        }
        free(fresh);
    }
    cached_calls(client, lat, calls / 10);
    t0 = now_ns();
    cached_calls(client, lat, calls);
    report_latency("cached_1_thread_many_sets", lat, calls, now_ns() - t0, 1);
    printf("{\"row\":\"scope_sets\",\"count\":%d}\n", sets);

    na_client_free(client);
    file_cache_rows(authority, client_id, user, password, lat, calls);
    dpop_rows(lat, calls / 10 < 20000 ? calls / 10 : 20000);
    free(lat);
    getrusage(RUSAGE_SELF, &ru);
    printf("{\"row\":\"peak_rss\",\"kib\":%ld}\n", ru.ru_maxrss);
    return 0;
}
