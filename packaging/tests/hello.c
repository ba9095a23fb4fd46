/* packaging/tests/inside.sh, step 4: a C program against the installed package (pkg-config). */
#include <nativeauth.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    char config[1024], request[1024];
    na_client *client = NULL;
    char *out = NULL;
    int rc;
    if (argc != 6) {
        fprintf(stderr, "usage: hello AUTHORITY CLIENT_ID USERNAME PASSWORD SCOPE\n");
        return 2;
    }
    snprintf(config, sizeof config, "{\"v\":1,\"authority\":\"%s\",\"client_id\":\"%s\"}", argv[1], argv[2]);
    rc = na_client_new(config, &client, &out);
    if (rc != NA_OK) {
        fprintf(stderr, "na_client_new: %s\n", out ? out : na_status_str(rc));
        na_string_free(out);
        return 1;
    }
    na_string_free(out);
    snprintf(request, sizeof request, "{\"v\":1,\"username\":\"%s\",\"password\":\"%s\",\"scopes\":[\"%s\"]}",
             argv[3], argv[4], argv[5]);
    rc = na_sign_in(client, request, &out);
    if (rc != NA_OK || strstr(out, "\"signed_in\"") == NULL) {
        fprintf(stderr, "na_sign_in: %s\n", out);
        na_string_free(out);
        na_client_free(client);
        return 1;
    }
    na_string_free(out);
    snprintf(request, sizeof request, "{\"v\":1,\"scopes\":[\"%s\"]}", argv[5]);
    rc = na_get_access_token(client, request, &out);
    if (rc != NA_OK || strstr(out, "\"access_token\"") == NULL) {
        fprintf(stderr, "na_get_access_token: %s\n", out);
        na_string_free(out);
        na_client_free(client);
        return 1;
    }
    printf("c: libnativeauth %s signed in and got a token for %s\n", na_version(), argv[5]);
    na_string_free(out);
    na_client_free(client);
    return 0;
}
