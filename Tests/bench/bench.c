/* bench.c — measures what an embedding program pays: load time, client creation, the JSON boundary, a cached token,
 * and peak memory. Run by `make bench` against a freshly started emulator (settings from the environment, as the
 * examples take them). Prints numbers; asserts nothing. */
#define _POSIX_C_SOURCE 200809L
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef int (*op_fn)(void *, const char *, char **);

static double now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

#define LOAD(name) (*(void **)(&name) = dlsym(lib, #name))

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "libnativeauth.so";
    const char *authority = getenv("NATIVEAUTH_AUTHORITY"), *client_id = getenv("NATIVEAUTH_CLIENT_ID");
    const char *user = getenv("NATIVEAUTH_USERNAME"), *password = getenv("NATIVEAUTH_PASSWORD"), *scope = getenv("API1_SCOPE");
    int (*na_client_new)(const char *, void **, char **);
    void (*na_client_free)(void *);
    void (*na_string_free)(char *);
    op_fn na_client_info, na_sign_in, na_get_access_token;
    void *lib, *client = NULL;
    char config[2048], request[1024], *out = NULL;
    double t0, t;
    int i, n;
    struct rusage ru;

    if (!authority || !client_id || !user || !password || !scope) {
        fprintf(stderr, "set NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID, NATIVEAUTH_USERNAME, NATIVEAUTH_PASSWORD, API1_SCOPE\n");
        return 2;
    }
    t0 = now_ms();
    lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    t = now_ms() - t0;
    if (!lib) { fprintf(stderr, "%s\n", dlerror()); return 1; }
    printf("dlopen                         %8.2f ms\n", t);
    LOAD(na_client_new); LOAD(na_client_free); LOAD(na_string_free); LOAD(na_client_info); LOAD(na_sign_in);
    LOAD(na_get_access_token);

    snprintf(config, sizeof config, "{\"v\":1,\"authority\":\"%s\",\"client_id\":\"%s\"}", authority, client_id);
    t0 = now_ms();
    n = 1000;
    for (i = 0; i < n; i++) {
        na_client_new(config, &client, NULL);
        na_client_free(client);
    }
    printf("na_client_new + free           %8.2f us/op\n", (now_ms() - t0) * 1000.0 / n);
    na_client_new(config, &client, NULL);

    t0 = now_ms();
    n = 20000;
    for (i = 0; i < n; i++) {
        na_client_info(client, "{\"v\":1}", &out);
        na_string_free(out);
    }
    printf("na_client_info (JSON in/out)   %8.2f us/op\n", (now_ms() - t0) * 1000.0 / n);

    snprintf(request, sizeof request, "{\"username\":\"%s\",\"password\":\"%s\",\"scopes\":[\"%s\"]}", user, password, scope);
    t0 = now_ms();
    if (na_sign_in(client, request, &out) != 0) { fprintf(stderr, "sign-in failed: %s\n", out); return 1; }
    printf("na_sign_in (3 round trips)     %8.2f ms\n", now_ms() - t0);
    na_string_free(out);

    snprintf(request, sizeof request, "{\"scopes\":[\"%s\"]}", scope);
    t0 = now_ms();
    n = 20000;
    for (i = 0; i < n; i++) {
        na_get_access_token(client, request, &out);
        na_string_free(out);
    }
    printf("na_get_access_token (cached)   %8.2f us/op\n", (now_ms() - t0) * 1000.0 / n);
    na_client_free(client);
    getrusage(RUSAGE_SELF, &ru);
    printf("peak RSS                       %8ld KiB\n", ru.ru_maxrss);
    return 0;
}
