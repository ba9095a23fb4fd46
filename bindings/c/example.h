/* example.h — small helpers shared by the NativeAuth C examples (settings, calls, printing).
 * The examples use jansson to build requests and read results; any JSON library works the same way. */
#ifndef NATIVEAUTH_EXAMPLE_H
#define NATIVEAUTH_EXAMPLE_H

#include <jansson.h>
#include <nativeauth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* An operation of the C ABI: int na_xxx(na_client *, const char *request_json, char **out_json). */
typedef int (*na_operation)(na_client *, const char *, char **);

/* A setting from "--flag value" on the command line, else the environment variable, else the fallback. */
static inline const char *setting(int argc, char **argv, const char *flag, const char *env, const char *fallback) {
    int i;
    const char *v;
    for (i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], flag) == 0) return argv[i + 1];
    v = getenv(env);
    return (v && *v) ? v : fallback;
}

static inline const char *required(int argc, char **argv, const char *flag, const char *env) {
    const char *v = setting(argc, argv, flag, env, NULL);
    if (!v) {
        fprintf(stderr, "missing setting: %s (or environment variable %s)\n", flag, env);
        exit(2);
    }
    return v;
}

/* Prints an error document: its stable code, its message, and the server's correlation id when there is one. */
static inline void print_error(const char *step, int rc, json_t *doc) {
    json_t *err = json_object_get(doc, "error");
    const char *cid = json_string_value(json_object_get(json_object_get(err, "server"), "correlation_id"));
    fprintf(stderr, "%s failed (%s): %s — %s%s%s\n", step, na_status_str(rc),
            json_string_value(json_object_get(err, "code")), json_string_value(json_object_get(err, "message")),
            cid ? " correlation id " : "", cid ? cid : "");
}

/* Calls `op` with `request` (the reference is consumed) and returns the parsed result, or NULL after printing the
 * error. The returned document is the caller's to json_decref. */
static inline json_t *call(const char *step, na_operation op, na_client *client, json_t *request) {
    char *req = json_dumps(request, JSON_COMPACT);
    char *out = NULL;
    json_t *doc;
    int rc;
    json_decref(request);
    if (!req) {
        fprintf(stderr, "%s: out of memory\n", step);
        return NULL;
    }
    rc = op(client, req, &out);
    free(req);
    doc = json_loads(out ? out : "null", 0, NULL);
    na_string_free(out); /* never free(): results may hold tokens and are wiped */
    if (rc != NA_OK) {
        print_error(step, rc, doc);
        json_decref(doc);
        return NULL;
    }
    return doc;
}

static inline const char *status_of(json_t *doc) { return json_string_value(json_object_get(doc, "status")); }

/* The first characters of a token, for a transcript that shows which token without revealing it. */
static inline const char *masked(const char *token, char *buf, size_t n) {
    snprintf(buf, n, "%.10s… (%u chars)", token ? token : "", (unsigned)(token ? strlen(token) : 0));
    return buf;
}

/* Reads a one-time code: from NATIVEAUTH_CODE if set, else a line on standard input. */
static inline const char *read_code(const char *prompt, char *buf, size_t n) {
    const char *env = getenv("NATIVEAUTH_CODE");
    char *nl;
    if (env && *env) return env;
    printf("%s", prompt);
    fflush(stdout);
    if (!fgets(buf, (int)n, stdin)) return NULL;
    nl = strpbrk(buf, "\r\n");
    if (nl) *nl = '\0';
    return buf;
}

/* Creates a client from --authority/--client-id/--ca-bundle (or NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID,
 * NATIVEAUTH_CA_BUNDLE). Returns NULL after printing the error. */
static inline na_client *open_client(int argc, char **argv) {
    json_t *config = json_pack("{s:i, s:s, s:s, s:[s,s], s:[s,s]}", "v", 1,
                               "authority", required(argc, argv, "--authority", "NATIVEAUTH_AUTHORITY"),
                               "client_id", required(argc, argv, "--client-id", "NATIVEAUTH_CLIENT_ID"),
                               "challenge_types", "password", "oob",
                               "capabilities", "mfa_required", "registration_required");
    const char *ca = setting(argc, argv, "--ca-bundle", "NATIVEAUTH_CA_BUNDLE", NULL);
    char *text, *err = NULL;
    na_client *client = NULL;
    int rc;
    if (ca) json_object_set_new(config, "ca_bundle", json_string(ca));
    text = json_dumps(config, JSON_COMPACT);
    json_decref(config);
    rc = na_client_new(text, &client, &err);
    free(text);
    if (rc != NA_OK) {
        json_t *doc = json_loads(err ? err : "null", 0, NULL);
        print_error("na_client_new", rc, doc);
        json_decref(doc);
    }
    na_string_free(err);
    return client;
}

#endif
