/* first_open.c — the first open of a file cache, as a program pays it once per client: na_client_new over a cache
 * file (the key looked up in its key store, if any, then the file read, decrypted and parsed) and na_client_free.
 * Run by `make bench` (Tests/bench/bench.py) for a plain file, a file with the host's encryption_key, and files whose
 * key is in the Secret Service or the kernel keyring, of 1 and of 1,000 accounts. Prints one JSON object with the
 * median and the first run, in milliseconds; asserts nothing.
 *
 * Usage: first_open LIBRARY CONFIG_JSON [RUNS]   (RUNS default 21) */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    int (*client_new)(const char *, void **, char **);
    void (*client_free)(void *);
    void (*string_free)(char *);
    void *lib, *client = NULL;
    char *err = NULL;
    double samples[101], first = 0;
    int runs = argc > 3 ? atoi(argv[3]) : 21, k;
    if (argc < 3 || runs < 1 || runs > 101) {
        fprintf(stderr, "usage: first_open LIBRARY CONFIG_JSON [RUNS ≤ 101]\n");
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW);
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    *(void **)&client_new = dlsym(lib, "na_client_new");
    *(void **)&client_free = dlsym(lib, "na_client_free");
    *(void **)&string_free = dlsym(lib, "na_string_free");
    if (!client_new || !client_free || !string_free) { fprintf(stderr, "missing exports\n"); return 1; }
    for (k = 0; k < runs; k++) {
        double t0 = now_ns();
        if (client_new(argv[2], &client, &err) != 0) {
            fprintf(stderr, "na_client_new: %s\n", err ? err : "?");
            return 1;
        }
        client_free(client);
        samples[k] = now_ns() - t0;
        if (k == 0) first = samples[k];
    }
    qsort(samples, (size_t)runs, sizeof *samples, cmp_double);
    printf("{\"ms\":%.3f,\"first_ms\":%.3f}\n", samples[runs / 2] / 1e6, first / 1e6);
    return 0;
}
