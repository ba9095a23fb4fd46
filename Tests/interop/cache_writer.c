/* cache_writer.c — a small program that writes to a shared token cache file through the C ABI, for the file-cache
 * tests (Tests/interop/test_file_cache.py): cheap to start, so it can be killed hundreds of times.
 *
 * usage: cache_writer LIBRARY CONFIG_JSON SCOPE_PREFIX FIRST COUNT
 * Asks for a token for each scope SCOPE_PREFIX<FIRST> … SCOPE_PREFIX<FIRST+COUNT-1> (each one refresh-token round trip
 * and one cache write) and prints "done <n>" after each call returned — by then its write is in the file. Exits 1 on
 * the first failure, printing the error document. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef int (*op_fn)(void *, const char *, char **);

int main(int argc, char **argv) {
    int (*client_new)(const char *, void **, char **);
    void (*client_free)(void *);
    void (*string_free)(char *);
    op_fn get_access_token;
    void *lib, *client = NULL;
    char *out = NULL, request[1024];
    long first, count, i;

    if (argc != 6) {
        fprintf(stderr, "usage: cache_writer LIBRARY CONFIG_JSON SCOPE_PREFIX FIRST COUNT\n");
        return 2;
    }
    lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        return 2;
    }
    *(void **)(&client_new) = dlsym(lib, "na_client_new");
    *(void **)(&client_free) = dlsym(lib, "na_client_free");
    *(void **)(&string_free) = dlsym(lib, "na_string_free");
    *(void **)(&get_access_token) = dlsym(lib, "na_get_access_token");
    if (!client_new || !client_free || !string_free || !get_access_token) return 2;
    first = atol(argv[4]);
    count = atol(argv[5]);
    if (client_new(argv[2], &client, &out) != 0) {
        printf("error %s\n", out ? out : "?");
        return 1;
    }
    for (i = first; i < first + count; i++) {
        snprintf(request, sizeof request, "{\"scopes\":[\"%s%04ld\"]}", argv[3], i);
        if (get_access_token(client, request, &out) != 0) {
            printf("error %s\n", out ? out : "?");
            fflush(stdout);
            return 1;
        }
        string_free(out);
        printf("done %ld\n", i);
        fflush(stdout);
    }
    client_free(client);
    return 0;
}
