/* What libsecret would cost a host process before its first call: dlopen("libsecret-1.so.0") and its dependencies
 * (GLib, GObject, GIO, libgcrypt, …), each measurement in a fresh process (a library already loaded costs nothing
 * the second time). Prints the median and the range of RUNS runs, for RTLD_NOW and RTLD_LAZY. The numbers are quoted
 * in Sources/NativeAuthKeyring/SecretServiceKeyStore.swift, which is why the Secret Service store has its own D-Bus
 * client instead.
 *
 *   cc -std=c99 -O2 -Wall -Wextra Tests/bench/dlopen_libsecret.c -o /tmp/dlopen_libsecret -ldl
 *   /tmp/dlopen_libsecret [RUNS]        (default 31)
 *
 * Built with -DNA_LIBSECRET_LOOKUP and libsecret's headers (`pkg-config --cflags libsecret-1`; it is still not linked,
 * only loaded), it also measures dlopen and one secret_password_lookupv_sync of the item with application=nativeauth
 * and cache_path=/bench/cache.json on $DBUS_SESSION_BUS_ADDRESS — what a libsecret-based store would cost for its
 * first lookup in a process, to compare with SecretServiceKeyStore's cold lookup.
 */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef NA_LIBSECRET_LOOKUP
#include <libsecret/secret.h>
#endif

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int compare(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* In the child: load the library and write the milliseconds it took to fd. */
static int child(const char *mode, int fd) {
    double t0 = now_ms();
    void *h = dlopen("libsecret-1.so.0", strcmp(mode, "now") == 0 ? RTLD_NOW : RTLD_LAZY);
    double ms = now_ms() - t0;
    if (h == NULL) {
        fprintf(stderr, "dlopen: %s\n", dlerror());
        return 1;
    }
    return write(fd, &ms, sizeof ms) == (ssize_t)sizeof ms ? 0 : 1;
}

#ifdef NA_LIBSECRET_LOOKUP
/* dlopen, then one lookup through libsecret's own calls (looked up with dlsym: nothing is linked). */
static int child_lookup(int fd) {
    double t0 = now_ms();
    void *h = dlopen("libsecret-1.so.0", RTLD_NOW);
    if (h == NULL) return 1;
    GHashTable *(*table_new)(GHashFunc, GEqualFunc, GDestroyNotify, GDestroyNotify);
    gboolean (*insert)(GHashTable *, gpointer, gpointer);
    gchar *(*lookup)(const SecretSchema *, GHashTable *, GCancellable *, GError **);
    void (*password_free)(gchar *);
    void *str_hash = dlsym(h, "g_str_hash"), *str_equal = dlsym(h, "g_str_equal");
    *(void **)(&table_new) = dlsym(h, "g_hash_table_new_full");
    *(void **)(&insert) = dlsym(h, "g_hash_table_insert");
    *(void **)(&lookup) = dlsym(h, "secret_password_lookupv_sync");
    *(void **)(&password_free) = dlsym(h, "secret_password_free");
    if (!str_hash || !str_equal || !table_new || !insert || !lookup || !password_free) return 1;
    GHashFunc hash_fn;
    GEqualFunc equal_fn;
    *(void **)(&hash_fn) = str_hash;
    *(void **)(&equal_fn) = str_equal;
    static const SecretSchema schema = {
        "org.nativeauth.CacheKey", SECRET_SCHEMA_DONT_MATCH_NAME,
        {{"application", SECRET_SCHEMA_ATTRIBUTE_STRING}, {"cache_path", SECRET_SCHEMA_ATTRIBUTE_STRING}, {NULL, 0}},
        0, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    GHashTable *attributes = table_new(hash_fn, equal_fn, NULL, NULL);
    insert(attributes, "application", "nativeauth");
    insert(attributes, "cache_path", "/bench/cache.json");
    gchar *secret = lookup(&schema, attributes, NULL, NULL);
    double ms = now_ms() - t0;
    if (secret == NULL) {
        fprintf(stderr, "libsecret found no item application=nativeauth cache_path=/bench/cache.json\n");
        return 1;
    }
    password_free(secret);
    return write(fd, &ms, sizeof ms) == (ssize_t)sizeof ms ? 0 : 1;
}
#endif

int main(int argc, char **argv) {
    if (argc == 4 && strcmp(argv[1], "--child") == 0) {
#ifdef NA_LIBSECRET_LOOKUP
        if (strcmp(argv[2], "lookup") == 0) return child_lookup(atoi(argv[3]));
#endif
        return child(argv[2], atoi(argv[3]));
    }
    int runs = argc > 1 ? atoi(argv[1]) : 31;
    if (runs < 1 || runs > 1000) runs = 31;
    const char *modes[] = {"now", "lazy", "lookup"};
#ifdef NA_LIBSECRET_LOOKUP
    const int mode_count = 3;
#else
    const int mode_count = 2;
#endif
    for (int m = 0; m < mode_count; m++) {
        double *t = calloc((size_t)runs, sizeof *t);
        if (t == NULL) return 1;
        for (int i = 0; i < runs; i++) {
            int p[2];
            if (pipe(p) != 0) return 1;
            pid_t pid = fork();
            if (pid == 0) {
                char fd[16];
                snprintf(fd, sizeof fd, "%d", p[1]);
                close(p[0]);
                execl("/proc/self/exe", argv[0], "--child", modes[m], fd, (char *)NULL);
                _exit(127);
            }
            close(p[1]);
            if (read(p[0], &t[i], sizeof t[i]) != (ssize_t)sizeof t[i]) {
                fprintf(stderr, "a child failed\n");
                return 1;
            }
            close(p[0]);
            int status;
            waitpid(pid, &status, 0);
        }
        qsort(t, (size_t)runs, sizeof *t, compare);
        printf("%s: median %.2f ms (min %.2f, max %.2f, %d fresh processes)\n",
               m == 0   ? "dlopen(libsecret-1.so.0, RTLD_NOW)"
               : m == 1 ? "dlopen(libsecret-1.so.0, RTLD_LAZY)"
                        : "dlopen + first secret_password_lookupv_sync",
               t[runs / 2], t[0], t[runs - 1], runs);
        free(t);
    }
    return 0;
}
