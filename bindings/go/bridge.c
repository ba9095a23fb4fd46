#include <stdlib.h>
#include <string.h>

#include "bridge.h"
#include "_cgo_export.h"

go_na_new_result go_na_client_new(const char *config) {
    go_na_new_result r = {0, 0, NULL};
    na_client *c = NULL;
    r.rc = na_client_new(config, &c, &r.err);
    r.client = (uintptr_t)c;
    return r;
}

void go_na_client_free(uintptr_t client) { na_client_free((na_client *)client); }

go_na_result go_na_call(const char *call, uintptr_t client, const char *request) {
    go_na_result r = {NA_EINVAL, NULL};
    na_client *c = (na_client *)client;
    if (!strcmp(call, "client_info")) r.rc = na_client_info(c, request, &r.out);
    else if (!strcmp(call, "sign_in")) r.rc = na_sign_in(c, request, &r.out);
    else if (!strcmp(call, "sign_up")) r.rc = na_sign_up(c, request, &r.out);
    else if (!strcmp(call, "reset_password")) r.rc = na_reset_password(c, request, &r.out);
    else if (!strcmp(call, "flow_submit")) r.rc = na_flow_submit(c, request, &r.out);
    else if (!strcmp(call, "sign_in_interactive")) r.rc = na_sign_in_interactive(c, request, &r.out);
    else if (!strcmp(call, "sign_in_device_code")) r.rc = na_sign_in_device_code(c, request, &r.out);
    else if (!strcmp(call, "get_access_token")) r.rc = na_get_access_token(c, request, &r.out);
    else if (!strcmp(call, "call_api")) r.rc = na_call_api(c, request, &r.out);
    else if (!strcmp(call, "get_account")) r.rc = na_get_account(c, request, &r.out);
    else if (!strcmp(call, "get_accounts")) r.rc = na_get_accounts(c, request, &r.out);
    else if (!strcmp(call, "sign_out")) r.rc = na_sign_out(c, request, &r.out);
    return r;
}

void go_na_wipe_free(char *s, size_t n) {
    if (s) {
        memset(s, 0, n);
        free(s);
    }
}

/* How deep the calling thread is inside the package's callbacks (a callback may call a library function that logs
 * into the callback again). */
static __thread int callback_depth;

static void log_trampoline(int level, const char *message, const char *correlation_id, void *user_data) {
    callback_depth++;
    goNaLog(level, (char *)message, (char *)correlation_id, (uintptr_t)user_data);
    callback_depth--;
}

static int browser_trampoline(const char *url, void *user_data) {
    callback_depth++;
    int rc = goNaBrowser((char *)url, (uintptr_t)user_data);
    callback_depth--;
    return rc;
}

int go_na_set_log(uintptr_t client, int level, uintptr_t handle) {
    return na_client_set_log_callback((na_client *)client, level, handle ? log_trampoline : NULL,
                                      (void *)handle);
}

int go_na_set_browser(uintptr_t client, uintptr_t handle) {
    return na_client_set_browser_callback((na_client *)client, handle ? browser_trampoline : NULL, (void *)handle);
}

int go_na_in_callback(void) { return callback_depth; }
