/*
 * nativeauth.h — NativeAuth: Microsoft Entra External ID native authentication for C and every runtime that
 * can call C (Python ctypes, …). This header is the specification of the C ABI.
 *
 * ---------------------------------------------------------------------------------------------------------------
 * Conventions (they hold for every function below)
 * ---------------------------------------------------------------------------------------------------------------
 * Documents.  Requests and results are UTF-8 JSON objects. Every document the library returns carries "v": 1.
 *   Requests may carry "v": 1 (a missing "v" is read as 1; any other value is refused). Unknown keys are ignored
 *   and key order means nothing. A request document may be at most 1 MiB.
 *
 * Operations.  Every operation has the shape
 *       int na_xxx(na_client *client, const char *request_json, char **out_json);
 *   It returns NA_OK (0) or one of the negative NA_E* codes below, and ALWAYS sets *out_json (unless out_json
 *   itself is NULL, which returns NA_EINVAL): to the result document on NA_OK, otherwise to an error document
 *       {"v":1,"error":{"code":"<stable code>","message":"<English sentence>", ...}}
 *   "code" is a stable string to branch on (listed below and in docs/errors.md); "message" is for people and may
 *   change. When the error came from a server answer, "error" also holds
 *       "server":{"error":…,"suberror":…,"error_codes":[…],"correlation_id":…,"trace_id":…,"http_status":…}
 *   and, for argument errors, "field" names the offending member ("cache.path", "scopes[2]").
 *   A step that needs more input from the user is a result (a "status"), never an error.
 *   Messages and logs never contain passwords, one-time codes, continuation tokens or tokens.
 *
 * Memory.  Every char * the library hands out is freed with na_string_free() — never free(). Every const char *
 *   it returns is static and must not be freed. The library never keeps pointers passed in after a call returns.
 *
 * Handles.  A na_client is opaque. A handle that was freed (or never valid) is detected: calls answer NA_EINVAL
 *   with code "invalid_handle" instead of crashing. Handles are never reused within a process.
 *
 * Threads.  A na_client may be used from many threads at once; calls block the calling thread, with bounded
 *   timeouts. na_client_free() may be called while other threads are inside calls on the same client: they finish
 *   normally and the client is released after the last of them returns.
 *
 * Robustness.  No input — NULL, invalid JSON, invalid UTF-8, wrong types, huge strings — crashes or aborts the
 *   host process; each is answered with an error document.
 *
 * Security.  TLS peer and host verification are always on (TLS 1.2 or newer). Only https is allowed, plus plain
 *   http to loopback hosts (localhost, 127.0.0.0/8, [::1]) for local emulators. Redirects are never followed.
 * ---------------------------------------------------------------------------------------------------------------
 */
#ifndef NATIVEAUTH_H
#define NATIVEAUTH_H

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Versions -------------------------------------------------------------------------------------------- */

#define NA_VERSION_MAJOR 0
#define NA_VERSION_MINOR 1
#define NA_VERSION_PATCH 0
/* NA_VERSION_NUM: 0xMMmmpp, comparable with < and >. */
#define NA_VERSION_NUM ((NA_VERSION_MAJOR << 16) | (NA_VERSION_MINOR << 8) | NA_VERSION_PATCH)
#define NA_VERSION_STRING "0.1.0"
/* The ABI version this header describes: the SONAME major of libnativeauth.so.1. */
#define NA_ABI_VERSION 1

/* The library's version string, e.g. "0.1.0" (static storage). */
const char *na_version(void);

/* The ABI version of the loaded library (the SONAME major). A program built against this header should check
 * na_abi_version() == NA_ABI_VERSION at start-up. */
int na_abi_version(void);

/* ---- Status codes ---------------------------------------------------------------------------------------- */
/* Coarse, stable return codes for cheap branching. Values are permanent; new codes are only ever appended
 * (and NA__LAST moves). The "code" string in the error document says precisely what happened. */
enum {
    NA_OK           =  0, /* success; *out_json holds the result                                              */
    NA_EINVAL       = -1, /* bad argument: NULL pointer, invalid JSON, wrong type, missing field, invalid or
                             freed handle (code "invalid_handle"), unsupported option (code "not_supported")  */
    NA_EAUTH        = -2, /* authentication failed: wrong credentials or code, unknown user, …                 */
    NA_ENOTFOUND    = -3, /* nothing to act on, e.g. no signed-in account                                     */
    NA_EINTERACTION = -4, /* the user must act (browser required, interaction required)                       */
    NA_ENETWORK     = -5, /* no usable answer: connect failure, timeout ("timeout"), TLS failure ("tls")       */
    NA_ESERVER      = -6, /* the server answered with an error or something unexpected                         */
    NA_ESTATE       = -7, /* a flow is expired, already used, or used at the wrong step                        */
    NA_ENOMEM       = -8, /* out of memory; *out_json is a static document that na_string_free() ignores       */
    NA_EINTERNAL    = -9, /* a bug in the library; please report it with the document                          */
    NA__LAST        = -10 /* never returned; marks the end of the list and moves as codes are appended         */
};

/* A short English description of a status code, e.g. "invalid argument" (static storage; never NULL:
 * unknown codes give "unknown status"). */
const char *na_status_str(int status);

/* ---- Memory ---------------------------------------------------------------------------------------------- */

/* Frees a string the library returned. NULL-safe. The buffer is overwritten with zeros before it is released,
 * because results may hold tokens. Never pass memory the library did not allocate. */
void na_string_free(char *s);

/* ---- Client ---------------------------------------------------------------------------------------------- */

typedef struct na_client na_client;

/* Creates a client.
 *
 * config_json: the configuration document
 *   {
 *     "v": 1,
 *     "authority": "https://contoso.ciamlogin.com/contoso.onmicrosoft.com",
 *                        -- or "tenant_subdomain": "contoso", expanded to the authority above. Exactly one of the
 *                           two. "https://contoso.ciamlogin.com" (no path) is rewritten the same way. The
 *                           authority is normalised: lowercase scheme/host, no trailing slash; a query is refused.
 *     "client_id": "00001111-aaaa-2222-bbbb-3333cccc4444",          required; 1-256 printable ASCII characters
 *     "challenge_types": ["password", "oob"],   optional, default both; "redirect" is always added
 *     "capabilities": ["mfa_required", "registration_required"],   optional, default none
 *     "redirect_uri": "http://localhost",       optional; used by the browser flows
 *     "connect_timeout_ms": 10000,              optional, 1..600000, default 10000
 *     "request_timeout_ms": 30000,              optional, 1..600000, default 30000 (whole request)
 *     "cache": {"type": "memory"},              optional, default memory. {"type":"file","path":"/abs/path"} is
 *                                               recognised but answered "not_supported" in this version.
 *     "log_level": "off",                       optional: off (default), error, warning, info, verbose
 *     "ca_bundle": "/etc/ssl/certs/ca-certificates.crt"
 *                        -- optional CA file used to verify servers. Precedence: this setting, then the
 *                           SSL_CERT_FILE environment variable, then CURL_CA_BUNDLE, then libcurl's default.
 *   }
 * out_client: receives the new client (NULL on failure). Must not be NULL.
 * out_error_json: may be NULL. On failure receives an error document (free it with na_string_free); on success
 *   it is set to NULL.
 *
 * Returns NA_OK, NA_EINVAL (with "field" naming the bad member), or NA_ENOMEM.
 * Creating a client does no network I/O. */
int na_client_new(const char *config_json, na_client **out_client, char **out_error_json);

/* Frees a client and everything it holds (tokens are wiped). NULL-safe; freeing twice is detected and ignored. */
void na_client_free(na_client *client);

/* Describes a client: its effective configuration.
 * request_json: "{}" or "{\"v\":1}" (NULL is treated as "{}").
 * result: {"v":1,"version":"0.1.0","config":{"authority":…,"client_id":…,"challenge_types":["oob","password",
 *          "redirect"],"capabilities":[…],"connect_timeout_ms":…,"request_timeout_ms":…,"cache":{"type":"memory"},
 *          "log_level":…,"ca_bundle_source":"config|SSL_CERT_FILE|CURL_CA_BUNDLE|default","ca_bundle":…?,
 *          "redirect_uri":…?}} */
int na_client_info(na_client *client, const char *request_json, char **out_json);

/* ---- Logging --------------------------------------------------------------------------------------------- */

#define NA_LOG_OFF     0
#define NA_LOG_ERROR   1
#define NA_LOG_WARNING 2
#define NA_LOG_INFO    3
#define NA_LOG_VERBOSE 4

/* A log callback. level is NA_LOG_ERROR..NA_LOG_VERBOSE; message is one line of UTF-8; correlation_id is the
 * request's client-request-id or NULL. Both strings are valid only during the call. The callback may be called
 * from any thread that is inside a library call, concurrently; it must not call back into the same client. */
typedef void (*na_log_fn)(int level, const char *message, const char *correlation_id, void *user_data);

/* Installs (or, with fn NULL, removes) the client's log callback and sets its level (NA_LOG_OFF..NA_LOG_VERBOSE),
 * replacing the configured "log_level". Logging is silent by default. Log lines never contain secrets or
 * usernames. Returns NA_OK or NA_EINVAL (bad handle or level). */
int na_client_set_log_callback(na_client *client, int level, na_log_fn fn, void *user_data);

#ifdef __cplusplus
}
#endif

#endif /* NATIVEAUTH_H */
