/* reset_password.c — self-service password reset: a code to the user's email, the new password, then sign in.
 *
 *   ./reset_password --authority … --client-id … --username ann@contoso.com --new-password '…'
 * The code comes from NATIVEAUTH_CODE or standard input. */
#include "example.h"

int main(int argc, char **argv) {
    const char *username = required(argc, argv, "--username", "NATIVEAUTH_USERNAME");
    const char *new_password = required(argc, argv, "--new-password", "NATIVEAUTH_NEW_PASSWORD");
    char line[128];
    const char *code;
    int ok = 0;
    na_client *client = open_client(argc, argv);
    json_t *state, *next;
    if (!client) return 1;

    printf("[C] resetting the password of %s\n", username);
    state = call("na_reset_password", na_reset_password, client, json_pack("{s:i, s:s}", "v", 1, "username", username));
    if (state && strcmp(status_of(state), "code_required") == 0 &&
        (code = read_code("Enter the code from the email: ", line, sizeof line)) != NULL) {
        next = call("na_flow_submit", na_flow_submit, client,
                    json_pack("{s:i, s:O, s:s}", "v", 1, "flow", json_object_get(state, "flow"), "code", code));
        json_decref(state);
        state = next;
    }
    if (state && strcmp(status_of(state), "password_required") == 0) {
        /* The library submits the password and polls the service until the reset completes. */
        next = call("na_flow_submit", na_flow_submit, client,
                    json_pack("{s:i, s:O, s:s}", "v", 1, "flow", json_object_get(state, "flow"),
                              "password", new_password));
        json_decref(state);
        state = next;
    }
    if (state && strcmp(status_of(state), "password_reset_completed") == 0) {
        printf("  password reset completed; signing in\n");
        next = call("na_flow_submit", na_flow_submit, client,
                    json_pack("{s:i, s:O, s:s}", "v", 1, "flow", json_object_get(state, "flow"), "action", "sign_in"));
        json_decref(state);
        state = next;
    }
    if (state && strcmp(status_of(state), "signed_in") == 0) {
        printf("[C] signed in with the new password\n");
        ok = 1;
    }
    json_decref(state);
    na_client_free(client);
    return ok ? 0 : 1;
}
