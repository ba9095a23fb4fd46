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

go_na_result go_na_dpop_proof(uintptr_t client, const char *request) {
    go_na_result r = {0, NULL};
    r.rc = na_dpop_proof((na_client *)client, request, &r.out);
    return r;
}

static void done_trampoline(int rc, const char *result_json, void *user_data) {
    goNaDone(rc, (char *)result_json, (uintptr_t)user_data);
}

go_na_started go_na_start(uintptr_t client, const char *call, const char *request, uintptr_t handle) {
    go_na_started r = {0, 0};
    na_op *op = NULL;
    r.rc = na_start((na_client *)client, call, request, done_trampoline, (void *)handle, &op);
    r.op = r.rc == NA_OK ? (uintptr_t)op : 0;
    return r;
}

int go_na_op_cancel(uintptr_t op) { return na_op_cancel((na_op *)op); }

void go_na_op_free(uintptr_t op) { na_op_free((na_op *)op); }

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
