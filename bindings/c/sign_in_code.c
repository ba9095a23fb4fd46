/* sign_in_code.c — sign in with an email one-time code: the library asks the service to email a code, the program
 * reads it (NATIVEAUTH_CODE, or a line on standard input) and submits it. Handles a wrong code by asking again.
 *
 *   ./sign_in_code --authority … --client-id … --username olivia@contoso.com */
#include "example.h"

int main(int argc, char **argv) {
    const char *username = required(argc, argv, "--username", "NATIVEAUTH_USERNAME");
    char line[128];
    na_client *client = open_client(argc, argv);
    json_t *state, *out;
    int attempts = 0, ok = 0;
    if (!client) return 1;

    state = call("na_sign_in", na_sign_in, client, json_pack("{s:i, s:s}", "v", 1, "username", username));
    while (state && strcmp(status_of(state), "code_required") == 0 && attempts++ < 3) {
        char prompt[256];
        const char *code;
        char *req, *result = NULL;
        int rc;
        json_t *next;
        snprintf(prompt, sizeof prompt, "Enter the %d-digit code sent to %s: ",
                 (int)json_integer_value(json_object_get(state, "code_length")),
                 json_string_value(json_object_get(state, "sent_to")));
        code = read_code(prompt, line, sizeof line);
        if (!code) break;
        next = json_pack("{s:i, s:O, s:s}", "v", 1, "flow", json_object_get(state, "flow"), "code", code);
        req = json_dumps(next, JSON_COMPACT);
        json_decref(next);
        rc = na_flow_submit(client, req, &result);
        free(req);
        next = json_loads(result ? result : "null", 0, NULL);
        na_string_free(result);
        const char *error = json_string_value(json_object_get(json_object_get(next, "error"), "code"));
        if (rc == NA_EAUTH && error && strcmp(error, "invalid_code") == 0) {
            printf("That code didn't work; try again.\n");  /* the flow stays usable */
            json_decref(next);
            continue;
        }
        if (rc != NA_OK) print_error("na_flow_submit", rc, next);
        json_decref(state);
        state = rc == NA_OK ? next : (json_decref(next), (json_t *)NULL);
    }
    if (state && strcmp(status_of(state), "signed_in") == 0) {
        printf("[C] signed in with a code: %s\n",
               json_string_value(json_object_get(json_object_get(state, "account"), "username")));
        ok = 1;
    }
    json_decref(state);
    out = call("na_sign_out", na_sign_out, client, json_pack("{s:i}", "v", 1));
    json_decref(out);
    na_client_free(client);
    return ok ? 0 : 1;
}
