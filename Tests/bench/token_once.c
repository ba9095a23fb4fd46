/* token_once.c — the smallest C program that prints a cached access token through the C ABI: na_client_new over
 * the file cache, na_get_access_token, the token on stdout. `make bench` times it as a whole process beside the
 * nativeauth command (goal: the command within 1.5x of this) and MSAL for Python's floor.
 *
 * Usage: token_once AUTHORITY CLIENT_ID CA_BUNDLE CACHE_FILE SCOPE */
#include <nativeauth.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    char config[4096], request[1024];
    na_client *client = NULL;
    char *error = NULL, *out = NULL;
    const char *token, *end;
    if (argc != 6) {
        fprintf(stderr, "usage: token_once AUTHORITY CLIENT_ID CA_BUNDLE CACHE_FILE SCOPE\n");
        return 2;
    }
    snprintf(config, sizeof config,
             "{\"v\":1,\"authority\":\"%s\",\"client_id\":\"%s\",\"ca_bundle\":\"%s\","
             "\"cache\":{\"type\":\"file\",\"path\":\"%s\"}}",
             argv[1], argv[2], argv[3], argv[4]);
    if (na_client_new(config, &client, &error) != NA_OK) {
        fprintf(stderr, "token_once: %s\n", error ? error : "na_client_new failed");
        na_string_free(error);
        return 1;
    }
    snprintf(request, sizeof request, "{\"v\":1,\"scopes\":[\"%s\"]}", argv[5]);
    if (na_get_access_token(client, request, &out) != NA_OK) {
        fprintf(stderr, "token_once: %s\n", out ? out : "na_get_access_token failed");
        na_string_free(out);
        na_client_free(client);
        return 1;
    }
    /* The token is the value of "access_token" (a JWT: no escapes inside). */
    token = strstr(out, "\"access_token\":\"");
    if (token) {
        token += strlen("\"access_token\":\"");
        end = strchr(token, '"');
        if (end) printf("%.*s\n", (int)(end - token), token);
    }
    na_string_free(out);
    na_client_free(client);
    return token ? 0 : 1;
}
