/* sign_up.c — sign up: verify the email with a code, set a password, give the attributes the user flow requires, then
 * sign in with the new account.
 *
 *   ./sign_up --authority … --client-id … --username new@contoso.com --password '…' --display-name 'New User'
 * The code comes from NATIVEAUTH_CODE or standard input. */
#include "example.h"

int main(int argc, char **argv) {
    const char *username = required(argc, argv, "--username", "NATIVEAUTH_USERNAME");
    const char *password = required(argc, argv, "--password", "NATIVEAUTH_PASSWORD");
    const char *display = setting(argc, argv, "--display-name", "NATIVEAUTH_DISPLAY_NAME", "New User");
    char line[128];
    int steps = 0, ok = 0;
    na_client *client = open_client(argc, argv);
    json_t *state, *out;
    if (!client) return 1;

    printf("[C] signing up %s\n", username);
    state = call("na_sign_up", na_sign_up, client, json_pack("{s:i, s:s}", "v", 1, "username", username));
    while (state && steps++ < 8) {
        const char *status = status_of(state);
        json_t *flow = json_object_get(state, "flow"), *next = NULL;
        printf("  state: %s\n", status);
        if (strcmp(status, "code_required") == 0) {
            const char *code = read_code("Enter the code from the verification email: ", line, sizeof line);
            if (!code) break;
            next = json_pack("{s:i, s:O, s:s}", "v", 1, "flow", flow, "code", code);
        } else if (strcmp(status, "password_required") == 0) {
            next = json_pack("{s:i, s:O, s:s}", "v", 1, "flow", flow, "password", password);
        } else if (strcmp(status, "attributes_required") == 0) {
            json_t *attrs = json_object();
            size_t i;
            json_t *a;
            json_array_foreach(json_object_get(state, "required_attributes"), i, a) {
                const char *name = json_string_value(json_object_get(a, "name"));
                /* A real app asks the user; this example knows displayName. */
                json_object_set_new(attrs, name, json_string(strcmp(name, "displayName") == 0 ? display : "n/a"));
            }
            next = json_pack("{s:i, s:O, s:o}", "v", 1, "flow", flow, "attributes", attrs);
        } else if (strcmp(status, "sign_up_completed") == 0) {
            next = json_pack("{s:i, s:O, s:s}", "v", 1, "flow", flow, "action", "sign_in");
        } else {
            ok = strcmp(status, "signed_in") == 0;
            if (ok) printf("[C] signed up and signed in: %s\n",
                           json_string_value(json_object_get(json_object_get(state, "account"), "username")));
            break;
        }
        out = call("na_flow_submit", na_flow_submit, client, next);
        json_decref(state);
        state = out;
    }
    json_decref(state);
    na_client_free(client);
    return ok ? 0 : 1;
}
