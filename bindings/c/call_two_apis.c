/* call_two_apis.c — the tutorial: sign in with email + password, get a token for API 1 and call it, get a token for
 * API 2 (a different scope set, from the same sign-in) and call it, then sign out.
 *
 *   ./call_two_apis --authority https://contoso.ciamlogin.com/contoso.onmicrosoft.com --client-id <id> \
 *       --username ann@contoso.com --password '…' \
 *       --api1-url https://…/todolist --api1-scope api://<id>/ToDoList.Read \
 *       --api2-url https://…/notes --api2-scope api://<id>/Notes.Read
 * Every setting may come from the environment instead: NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID, NATIVEAUTH_USERNAME,
 * NATIVEAUTH_PASSWORD, API1_URL, API1_SCOPE, API2_URL, API2_SCOPE (and NATIVEAUTH_CA_BUNDLE). */
#include "example.h"

static int call_api(na_client *client, const char *name, const char *url, const char *scope) {
    char buf[64];
    json_t *token, *response;
    char *body;
    token = call("na_get_access_token", na_get_access_token, client,
                 json_pack("{s:i, s:[s]}", "v", 1, "scopes", scope));
    if (!token) return 0;
    printf("  token for %s: %s, scopes: %s, %s\n", name,
           masked(json_string_value(json_object_get(token, "access_token")), buf, sizeof buf),
           json_string_value(json_array_get(json_object_get(token, "scopes"), 0)),
           json_is_true(json_object_get(token, "from_cache")) ? "from the cache" : "from the server");
    json_decref(token);
    response = call("na_call_api", na_call_api, client,
                    json_pack("{s:i, s:s, s:[s]}", "v", 1, "url", url, "scopes", scope));
    if (!response) return 0;
    body = json_dumps(json_object_get(response, "body"), JSON_COMPACT | JSON_ENCODE_ANY);
    printf("  %s answered HTTP %d: %s\n", name, (int)json_integer_value(json_object_get(response, "status")),
           body ? body : "");
    free(body);
    json_decref(response);
    return 1;
}

int main(int argc, char **argv) {
    const char *username = required(argc, argv, "--username", "NATIVEAUTH_USERNAME");
    const char *password = required(argc, argv, "--password", "NATIVEAUTH_PASSWORD");
    const char *url1 = required(argc, argv, "--api1-url", "API1_URL");
    const char *scope1 = required(argc, argv, "--api1-scope", "API1_SCOPE");
    const char *url2 = required(argc, argv, "--api2-url", "API2_URL");
    const char *scope2 = required(argc, argv, "--api2-scope", "API2_SCOPE");
    na_client *client;
    json_t *result, *out;
    int ok = 0;

    if (na_abi_version() != NA_ABI_VERSION) {
        fprintf(stderr, "libnativeauth ABI %d, built for %d\n", na_abi_version(), NA_ABI_VERSION);
        return 1;
    }
    client = open_client(argc, argv);
    if (!client) return 1;

    printf("[C] signing in as %s\n", username);
    result = call("na_sign_in", na_sign_in, client,
                  json_pack("{s:i, s:s, s:s, s:[s]}", "v", 1, "username", username, "password", password,
                            "scopes", scope1));
    if (result && strcmp(status_of(result), "signed_in") == 0) {
        json_t *account = json_object_get(result, "account");
        printf("  signed in: %s (home account %s)\n", json_string_value(json_object_get(account, "username")),
               json_string_value(json_object_get(account, "home_account_id")));
        ok = call_api(client, "API 1", url1, scope1) && call_api(client, "API 2", url2, scope2);
        /* the second call of each is served from the cache */
        ok = ok && call_api(client, "API 1", url1, scope1) && call_api(client, "API 2", url2, scope2);
    } else if (result) {
        fprintf(stderr, "sign-in needs more: %s (see sign_in_code.c and the MFA notes in docs/)\n", status_of(result));
    }
    json_decref(result);

    out = call("na_sign_out", na_sign_out, client, json_pack("{s:i}", "v", 1));
    if (out) printf("  %s\n", status_of(out));
    ok = ok && out;
    json_decref(out);
    na_client_free(client);
    return ok ? 0 : 1;
}
