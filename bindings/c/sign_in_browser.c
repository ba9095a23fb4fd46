/* sign_in_browser.c — native sign-in with the browser as the fallback, as the External ID tutorials do: try email +
 * password in the app's own UI; when the service answers that this user needs the browser ("browser_required"),
 * continue in one call with the browser sign-in, passing the error's login_hint. The browser is opened with the
 * configured browser_command, else $BROWSER, else xdg-open, on a one-time address of the library's loopback listener
 * (127.0.0.1 and ::1), which sends it on to the provider and later receives the redirect.
 *
 *   ./sign_in_browser --authority … --client-id … --username bea@contoso.com --password … [--scope api://…] */
#include "example.h"

int main(int argc, char **argv) {
    const char *username = required(argc, argv, "--username", "NATIVEAUTH_USERNAME");
    const char *password = required(argc, argv, "--password", "NATIVEAUTH_PASSWORD");
    const char *scope = setting(argc, argv, "--scope", "NATIVEAUTH_SCOPE", NULL);
    na_client *client = open_client(argc, argv);
    json_t *request, *state, *out;
    char *req, *result = NULL;
    int rc, ok = 0;
    if (!client) return 1;

    request = json_pack("{s:i, s:s, s:s}", "v", 1, "username", username, "password", password);
    if (scope) json_object_set_new(request, "scopes", json_pack("[s]", scope));
    req = json_dumps(request, JSON_COMPACT);
    json_decref(request);
    rc = na_sign_in(client, req, &result);
    free(req);
    state = json_loads(result ? result : "null", 0, NULL);
    na_string_free(result);

    if (rc == NA_EINTERACTION) {
        json_t *err = json_object_get(state, "error");
        const char *code = json_string_value(json_object_get(err, "code"));
        const char *hint = json_string_value(json_object_get(err, "login_hint"));
        if (code && strcmp(code, "browser_required") == 0) {
            printf("[C] native sign-in needs the browser (%s); continuing there\n",
                   json_string_value(json_object_get(err, "redirect_reason")) ? "redirect_reason given" : "no reason");
            fflush(stdout);
            request = json_pack("{s:i, s:s, s:i}", "v", 1, "login_hint", hint ? hint : username, "timeout_ms", 120000);
            if (scope) json_object_set_new(request, "scopes", json_pack("[s]", scope));
            json_decref(state);
            state = call("na_sign_in_interactive", na_sign_in_interactive, client, request);
            rc = state ? NA_OK : NA_EINTERACTION;
        } else {
            print_error("na_sign_in", rc, state);
        }
    } else if (rc != NA_OK) {
        print_error("na_sign_in", rc, state);
    }
    if (rc == NA_OK && state && strcmp(status_of(state), "signed_in") == 0) {
        printf("[C] signed in (%s): %s\n", json_string_value(json_object_get(state, "flow_type")),
               json_string_value(json_object_get(json_object_get(state, "account"), "username")));
        ok = 1;
    }
    json_decref(state);
    out = call("na_sign_out", na_sign_out, client, json_pack("{s:i}", "v", 1));
    json_decref(out);
    na_client_free(client);
    return ok ? 0 : 1;
}
