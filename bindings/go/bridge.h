/* The C side of the Go binding: small helpers that keep every library pointer on the C side (handles travel to Go
 * as integers: they are opaque numbers, not addresses). Compiled with the package (bridge.c). */
#ifndef NATIVEAUTH_GO_BRIDGE_H
#define NATIVEAUTH_GO_BRIDGE_H

#include <stddef.h>
#include <stdint.h>
#include <nativeauth.h>

typedef struct { int rc; char *out; } go_na_result;
typedef struct { int rc; uintptr_t client; char *err; } go_na_new_result;

go_na_new_result go_na_client_new(const char *config);
void go_na_client_free(uintptr_t client);

/* Starts an operation (na_start) by its name ("sign_in", "get_access_token", …); the library calls the Go function
 * goNaDone (async.go) exactly once with its result and handle, a runtime/cgo.Handle. op is the operation's handle
 * (0 when rc is not NA_OK: done will not run). */
typedef struct { int rc; uintptr_t op; } go_na_started;
go_na_started go_na_start(uintptr_t client, const char *call, const char *request, uintptr_t handle);
int go_na_op_cancel(uintptr_t op);
void go_na_op_free(uintptr_t op);

/* na_dpop_proof: local and fast, so called directly rather than started. out is the document (free with
 * na_string_free). */
go_na_result go_na_dpop_proof(uintptr_t client, const char *request);

/* A request document in C memory, wiped before it is freed: it may hold a password or a code. */
void go_na_wipe_free(char *s, size_t n);

/* The log and browser callbacks: the library calls trampolines (bridge.c) that call the Go functions goNaLog and
 * goNaBrowser (callbacks.go) with user_data, a runtime/cgo.Handle of the Go function. handle 0 removes the callback. */
int go_na_set_log(uintptr_t client, int level, uintptr_t handle);
int go_na_set_browser(uintptr_t client, uintptr_t handle);

/* Non-zero while the calling thread is inside one of this package's log or browser callbacks. */
int go_na_in_callback(void);

#endif
