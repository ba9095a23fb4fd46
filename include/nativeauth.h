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
 *       int na_OPERATION(na_client *client, const char *request_json, char **out_json);
 *   It returns NA_OK (0) or one of the negative NA_E* codes below, and ALWAYS sets *out_json (unless out_json
 *   itself is NULL, which returns NA_EINVAL): to the result document on NA_OK, otherwise to an error document
 *       {"v":1,"error":{"code":"<stable code>","message":"<English sentence>", ...}}
 *   "code" is a stable string to branch on (listed in docs/errors.md); "message" is for people and may
 *   change. When the error came from a server answer, "error" also holds
 *       "server":{"error":…,"suberror":…,"error_codes":[…],"correlation_id":…,"trace_id":…,"http_status":…,
 *                 "retry_after":… (the Retry-After header of a 429/503, as sent)}
 *   and, for argument errors, "field" names the offending member ("cache.path", "scopes[2]").
 *   Any call may answer invalid_argument, invalid_handle, out_of_memory or internal; every call that talks to the
 *   server may also answer network, timeout, tls, server or throttled. With a file cache, every call that changes
 *   the cache (a sign-in, a flow step that signs in, a refresh, a sign-out) may answer NA_ESTORAGE
 *   (cache_unreadable, cache_write_failed, cache_insecure, cache_key_invalid) after its change took effect in
 *   memory. The "Errors" of each call below list the others.
 *   A step that needs more input from the user is a result (a "status"), never an error.
 *   Messages and logs never contain passwords, one-time codes, continuation tokens or tokens.
 *
 * Memory.  Every char * the library hands out is freed with na_string_free() — never free(). Every const char *
 *   it returns is static and must not be freed. The library never keeps pointers passed in after a call returns.
 *
 * Handles.  A na_client is opaque, and not an address: never dereference it (runtimes whose garbage collector
 *   inspects pointers should hold it as an integer, e.g. uintptr_t). A handle that was freed (or never valid) is
 *   detected: calls answer NA_EINVAL
 *   with code "invalid_handle" instead of crashing. A handle's value is never reused for another client (its slot
 *   is recycled only under a new 40-bit generation). Finding the client takes no lock.
 *
 * Threads.  A na_client may be used from many threads at once; calls block the calling thread, with bounded
 *   timeouts (or are started, returning at once, with na_start: see "Asynchronous calls" at the end).
 *   na_client_free() may be called while other threads are inside calls on the same client: a call
 *   waiting (for a refresh another call or process is making, for a flow's redirect or approval) stops waiting and
 *   answers NA_ESTATE "cancelled"; the others finish normally, and the client is released after the last of them
 *   returns. A call made from inside a log or browser callback that needs what its own thread holds (a token
 *   refresh that thread is making, on this client or on another client sharing the cache file) is answered at once
 *   with NA_ESTATE "reentrant_call" instead of waiting for itself.
 *
 * Robustness.  No input — NULL, invalid JSON, invalid UTF-8, wrong types, huge strings — crashes or aborts the
 *   host process; each is answered with an error document.
 *
 * Security.  TLS peer and host verification are always on (TLS 1.2 or newer). Only https is allowed, plus plain
 *   http to exactly localhost, 127.0.0.1 and [::1] (local emulators), which never go through a proxy; other hosts
 *   go through the configured "proxy", else the environment's (https_proxy, all_proxy, NO_PROXY; see the
 *   configuration). A proxy's password never appears in an error, a log line or na_client_info. Redirects are
 *   never followed.
 *   A request carrying a password, a code, a continuation token or a refresh token is never sent twice where the
 *   server may have seen it (no resend after a timeout or a connection broken mid-answer); see SECURITY.md.
 *
 * Correlation.  All requests of one flow carry one client-request-id (a UUID); an independent call uses a fresh
 *   one. na_sign_in, na_sign_up, na_reset_password, na_get_access_token and na_call_api accept
 *   "correlation_id": "<UUID>" to choose it. Errors from a server answer carry it as server.correlation_id, and the
 *   log callback receives it.
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
    NA_EINVAL       = -1, /* bad argument, request document or handle, an unsupported option, or configuration the
                             server refused                                                                   */
    NA_EAUTH        = -2, /* the user's input was refused                                                     */
    NA_ENOTFOUND    = -3, /* nothing to act on                                                                */
    NA_EINTERACTION = -4, /* the user must act                                                                */
    NA_ENETWORK     = -5, /* no usable answer                                                                 */
    NA_ESERVER      = -6, /* the server answered with an error or something unexpected                        */
    NA_ESTATE       = -7, /* a flow is expired, finished, busy, cancelled or at another step; or a call from inside
                             a callback would wait for its own thread                                         */
    NA_ENOMEM       = -8, /* out of memory; *out_json is a static document that na_string_free() ignores      */
    NA_EINTERNAL    = -9, /* a bug in the library; please report it with the document                         */
    NA_ESTORAGE     = -10, /* the persistent token cache cannot be used or written                            */
    NA__LAST        = -11 /* never returned; marks the end of the list and moves as codes are appended        */
};
/* BEGIN error codes (generated from docs/errors.tsv by .ci/error-table, run by make docs: edit that file) */
/* The error document's "code" for each status (docs/errors.md says when each happens):
 *   NA_EINVAL       invalid_argument, invalid_handle, not_supported, invalid_scope, invalid_client, dpop_unsupported,
 *                   account_required
 *   NA_EAUTH        invalid_username, user_not_found, invalid_credentials, invalid_code, invalid_password,
 *                   user_already_exists, attributes_invalid, user_has_no_password, invalid_contact, contact_blocked,
 *                   auth_method_blocked, access_denied
 *   NA_ENOTFOUND    no_account
 *   NA_EINTERACTION browser_required, interaction_required, refresh_token_expired, password_change_required,
 *                   browser_unavailable
 *   NA_ENETWORK     network, timeout, tls
 *   NA_ESERVER      server, throttled, declined_scopes, password_reset_failed, id_token_invalid
 *   NA_ESTATE       flow_expired, flow_invalid, cancelled, reentrant_call
 *   NA_ENOMEM       out_of_memory
 *   NA_EINTERNAL    internal
 *   NA_ESTORAGE     cache_unreadable, cache_write_failed, cache_insecure, cache_key_invalid, keyring_unavailable
 */
/* END error codes */

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
 *     "authority_type": "ciam",                 optional: "ciam" (Entra External ID; the default), "aad" (Entra
 *                                               workforce; the default for login.microsoftonline.com), or "oidc":
 *                                               any OpenID Connect provider — the authority is its issuer (a bare
 *                                               origin is allowed), discovery is <authority>/.well-known/openid-
 *                                               configuration, its "issuer" must equal the authority
 *                                               and its token_endpoint be on the authority's origin; browser
 *                                               and device-code sign-in only (native-auth calls answer
 *                                               "not_supported"); no client_info; accounts are keyed by (iss, sub)
 *     "client_id": "00001111-aaaa-2222-bbbb-3333cccc4444",          required; 1-256 printable ASCII characters
 *     "challenge_types": ["password", "oob"],   optional, default both; "redirect" is always added
 *     "capabilities": ["mfa_required", "registration_required"],   optional, default none. The native-auth
 *                                               steps the app itself handles: MFA and strong-auth registration;
 *                                               without them a sign-in that needs one answers browser_required.
 *                                               Not "client_capabilities" (next), a different thing
 *     "client_capabilities": ["cp1"],           optional, default none; at most 16 printable-ASCII names. Sent
 *                                               with every token and authorization request as "claims"
 *                                               {"access_token":{"xms_cc":{"values":[…]}}} merged with the
 *                                               request's own claims (MSAL's rule); "cp1": the app answers claims
 *                                               challenges (Continuous Access Evaluation)
 *     "request_headers": {"x-fraud-id": "…"},   optional; the app's own headers (fraud and bot protection), sent
 *                                               with every request to the authority's origin (native auth, token,
 *                                               discovery), never to APIs or other origins. At most 16; names are
 *                                               HTTP tokens starting with x- (not x-ms-, x-client-, x-broker-,
 *                                               x-app-: MSAL's), each once; values ≤ 1024 bytes without CR, LF, NUL
 *                                               or other controls (a tab is allowed)
 *     "app_name": "Contoso Notes",              optional: the app's name and version, 1-128 printable ASCII
 *     "app_version": "2.1.0",                   characters each (no leading or trailing space), sent to the
 *                                               authority as x-app-name and x-app-ver (as MSAL sends its app's)
 *     "redirect_uri": "http://localhost",       optional; the browser sign-in's redirect URI. Default
 *                                               http://localhost (Entra) or http://127.0.0.1 (oidc). A loopback
 *                                               http URI gets a listener (localhost: on 127.0.0.1 and ::1, the
 *                                               same port, or 127.0.0.1 alone where ::1 does not exist;
 *                                               127.0.0.1: IPv4 only) and, without a port, an ephemeral port
 *                                               (RFC 8252); a path is kept. Any other URI (myapp://
 *                                               auth) has no listener: the app captures the redirect itself
 *     "post_logout_redirect_uri": "http://localhost/signed-out",   optional; sent with the end-session URL
 *     "browser_command": "firefox --new-window", optional; opens URLs when no browser callback is set (the URL is
 *                                               appended, or replaces %s; no shell). Then $BROWSER, then the
 *                                               default opener (na_client_set_browser_callback says which)
 *     "connect_timeout_ms": 10000,              optional, 1..600000, default 10000
 *     "request_timeout_ms": 30000,              optional, 1..600000, default 30000 (whole request)
 *     "retry_after_max_s": 10,                  optional, 0..300, default 10: a 429/503 with a Retry-After (seconds
 *                                               or HTTP-date) up to this long is waited out and retried once; a
 *                                               longer one answers "throttled" with "retry_after_s"
 *     "cache": {"type": "memory"},              optional, default memory (tokens live as long as the client).
 *                        -- or {"type": "file", "path"?: "/abs/path.json", "encryption_key"?: "<base64 of 32 bytes>",
 *                               "key_store"?: "secret_service" | "kernel_keyring" | "auto",
 *                               "key_store_timeout_ms"?: 2000, "migrate_plaintext_cache"?: false}
 *                           (just {"path": …} also means a file): tokens are kept in that file in MSAL's unified
 *                           token cache format — the JSON MSAL for Python's SerializableTokenCache reads and writes —
 *                           so this library in other programs, MSAL for Python and msal-extensions share one
 *                           sign-in. Without "path": $XDG_CACHE_HOME/nativeauth/token_cache.json, else
 *                           $HOME/.cache/nativeauth/token_cache.json. See "The file cache" below.
 *     "log_level": "off",                       optional: off (default), error, warning, info, verbose
 *     "async_workers": 4,                       optional, 1..64, default NA_ASYNC_WORKERS: the most threads that run
 *                                               this client's started operations at once (na_start)
 *     "ca_bundle": "/etc/ssl/certs/ca-certificates.crt",
 *                        -- optional CA file used to verify servers: alone, the only one trusted. Without it: the
 *                           SSL_CERT_FILE environment variable (else CURL_CA_BUNDLE), that file only, with
 *                           SSL_CERT_DIR's directory when set; SSL_CERT_DIR alone: the system's CA file and that
 *                           directory; else the system's store: libcurl's built-in CA file and directory — or, when
 *                           that file does not exist on this machine, the first existing of Go's well-known bundles
 *                           (/etc/ssl/certs/ca-certificates.crt, /etc/pki/tls/certs/ca-bundle.crt,
 *                           /etc/ssl/ca-bundle.pem, /etc/pki/tls/cacert.pem,
 *                           /etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem, /etc/ssl/cert.pem).
 *     "ca_bundle_system": false,                optional, only with ca_bundle: true trusts ca_bundle in addition to
 *                                               the store in force without it (a TLS-inspecting proxy's CA beside
 *                                               the system's CAs); false (default): ca_bundle replaces it
 *     "proxy": "http://user:password@proxy.corp:3128",
 *                        -- optional: the proxy of every request (authority, discovery, JWKS, APIs):
 *                           [scheme://][user[:password]@]host[:port], scheme http (default), https, socks5h,
 *                           socks4a, socks5, socks4 (the last two resolve names here; HTTP(S) proxies and the "h"/
 *                           "a" kinds are given the server's name, which this machine then never resolves); user and
 *                           password percent-encoded, offered with any scheme the proxy asks for (CURLAUTH_ANY:
 *                           Basic, Digest, NTLM, Negotiate; "http://:@host:port" lets Negotiate use the Kerberos
 *                           ticket). Wins over the environment; "" means no proxy (the environment is not read).
 *                           Without it: https_proxy, HTTPS_PROXY, all_proxy, ALL_PROXY (the first set), read when
 *                           the client is made; http_proxy plays no part (plain http goes only to the loopback
 *                           names, which never use a proxy). An environment value that is not a proxy address fails
 *                           each request that would use it (invalid_argument naming the variable, not its value).
 *                           localhost, 127.0.0.1 and [::1] are always reached directly.
 *     "no_proxy": "corp.example,10.0.0.0/8",   optional: the hosts reached directly, as NO_PROXY writes them
 *                                               (libcurl's rules: a name and the names under it, addresses and
 *                                               networks, "*" for all; no name is resolved); replaces the
 *                                               environment's no_proxy / NO_PROXY, which otherwise applies (with a
 *                                               configured proxy too, as for curl --proxy); "" exempts none
 *     "proxy_ca_bundle": "/etc/corp/proxy-ca.pem"  optional: the CA file verifying an https:// proxy (default: as
 *                                               servers are verified)
 *     "dpop": false      -- optional; true asks for sender-constrained tokens (DPoP, RFC 9449), "authority_type":
 *                           "oidc" only (an Entra authority answers dpop_unsupported here, with "field":"dpop"). Each
 *                           sign-in makes a P-256 key (libcrypto) for its account and sends a proof of it with its
 *                           token requests; the access and refresh tokens are bound to it ("token_type":"DPoP"). The
 *                           key is kept with the account in the cache — in the file beside the refresh token, so
 *                           sealed under the cache's key when it is encrypted — and never exported; a sign-out
 *                           removes it. Refreshes present the refresh token with a proof of the key; na_call_api
 *                           sends "Authorization: DPoP" with a proof; na_dpop_proof makes proofs for requests the app
 *                           sends itself. The discovery document must offer ES256 in
 *                           dpop_signing_alg_values_supported, else the first call that reads it answers
 *                           dpop_unsupported; a provider answering a proof with a Bearer token is refused the same
 *                           way — never a silent bearer token, and with "dpop": true a bearer sign-in found in a
 *                           shared cache answers interaction_required. A server's nonce challenge (use_dpop_nonce,
 *                           RFC 9449 §8, §9) is answered by exactly one more request with its nonce (safe for a
 *                           refresh token or a code: the server refused before redeeming anything); the last
 *                           DPoP-Nonce of each origin is used for its next request. Accounts whose tokens are DPoP-
 *                           bound stay so whatever a later client configures (they are refreshed with proofs).
 *   }
 * Proxy failures name the proxy (scheme://host:port, never its credentials) and say it was the proxy, within the
 * request's timeouts: network for a proxy that cannot be reached, refuses the credentials or asks for some (407),
 * refuses the CONNECT, or answers something that is not HTTP; timeout when it never answers; tls for an https
 * proxy's certificate. A server certificate no trusted CA vouches for (what a TLS-inspecting proxy presents) is
 * tls, with a message that names "ca_bundle", "ca_bundle_system", SSL_CERT_FILE and SSL_CERT_DIR.
 * Every request to the authority carries client-request-id, x-client-SKU ("NativeAuth.Linux"), x-client-Ver,
 * x-client-OS (the kernel release, as uname -r prints it) and x-client-CPU (the machine, as uname -m); native-auth
 * and token requests to Entra also carry MSAL's server telemetry: x-client-current-telemetry "4|<api id>,<operation>|"
 * (MSAL iOS's native-auth api ids per endpoint; 167 for a browser sign-in's code, 622 for device code) and
 * x-client-last-telemetry "4|0|<api id>,<correlation id>,…|<error>,…|": this client's requests that failed since
 * the last one that did not (the server's suberror or error code, or the library's own code; at most 350 bytes).
 * Nothing in them identifies the user. A token served from the cache sends nothing.
 * out_client: receives the new client (NULL on failure). Must not be NULL.
 * out_error_json: may be NULL. On failure receives an error document (free it with na_string_free); on success
 *   it is set to NULL.
 *
 * Returns NA_OK, NA_EINVAL (with "field" naming the bad member), NA_ESTORAGE (a file cache that must not be used:
 * cache_insecure, cache_key_invalid), or NA_ENOMEM.
 * Creating a client does no network I/O (a file cache is read).
 *
 * The file cache.
 *   Format: MSAL's unified cache, exactly as MSAL for Python 1.39 writes it: top-level "AccessToken",
 *   "RefreshToken", "IdToken", "Account", "AppMetadata"; keys lower-cased ("<home_account_id>-<environment>-
 *   accesstoken-<client_id>-<realm>-<target>", …); "environment" the authority's host (no port), "realm" the tenant
 *   segment of the OIDC discovery token_endpoint; "target" the granted scopes sorted and space-joined;
 *   timestamps as strings of epoch seconds. This client's entries (its client_id and environment) are its accounts;
 *   everything else in the file (other apps, other SDKs' fields and sections) is written back byte for byte. The
 *   library adds one field of its own, "nativeauth_sign_in_scopes", to its RefreshToken entries. DPoP-bound tokens
 *   ("dpop") go to sections of its own that MSAL does not read — MSAL for Python filters cached tokens on neither
 *   "token_type" nor "key_id" and would hand them out as bearer tokens: "NativeAuthDPoPAccessToken" and
 *   "NativeAuthDPoPRefreshToken" (entries shaped as MSAL's, with "token_type":"DPoP" and "key_id", the key's RFC 7638
 *   thumbprint), and "NativeAuthDPoPKey" (one per account: "kty":"EC", "crv":"P-256", "key_id", and "secret", the
 *   private key). Tokens whose key_id is not the account's key are not loaded.
 *   Safety: the directory is created 0700 and the file written 0600; every change is a read-modify-write under
 *   flock(LOCK_EX) on "<path>.lockfile" (the lock file msal-extensions uses), written to a temporary file in the same
 *   directory, fsync'd and renamed into place — two processes never lose each other's entries, and a process killed
 *   at any point leaves a complete file. A cache hit never touches the file; a miss, an account lookup or a refresh
 *   first checks the file's inode, size and modification time and reloads it if another process changed it; a cache
 *   hit looks at them at most once a second per client (one stat), so a sign-out (or sign-in) in another process
 *   reaches every client using the file within a second. A refresh-token rotation is written before the call
 *   returns.
 *   Shared refreshes: a refresh runs under an exclusive flock on "<path>.refresh-lock" (a file that stays in place)
 *   which every process using the file takes — one refresh at a time per file, across processes, so a rotated
 *   refresh token is never presented twice even by servers that revoke a whole sign-in on reuse (RFC 9700 §4.14).
 *   Inside it the file is read again: a token another process stored meanwhile that serves the request is returned
 *   with no request ("from_cache":true; for "force_refresh", one stored after the call began that is not the one it
 *   replaces; never for "claims"); otherwise the newest refresh token in the file is used. Waiting for the lock ends
 *   at twice the request timeout ("timeout") or when the client is freed ("cancelled"); the lock is never held
 *   across user interaction or a browser, and a process that dies holding it releases it. A refresh token the
 *   server refuses is dropped from the file only if the file still holds that very token; if it holds a newer one,
 *   the grant is tried once more with it.
 *   Refused (na_client_new answers NA_ESTORAGE): a file (or directory) owned by another user or writable by group or
 *   others, or a symbolic link: cache_insecure; an encrypted file and no key, or the wrong key, or altered bytes:
 *   cache_key_invalid — the file is never replaced. A file readable by others is used and rewritten 0600.
 *   Corrupt (not a JSON object, or nested deeper than 64 levels as any document the library reads): kept aside as
 *   "<path>.corrupt-<epoch seconds>" (made 0600; only the newest three are kept), reported once through the log
 *   (warning), and read as empty. Unreadable (permissions, a directory in
 *   its place, a file larger than 64 MiB): the client starts empty and never overwrites it.
 *   A change that cannot be written (unreadable file, permissions, disk full, read-only file system, or a file that
 *   became insecure or was re-keyed meanwhile) is kept in memory: the call that made it answers NA_ESTORAGE
 *   (cache_unreadable, cache_write_failed, cache_insecure or cache_key_invalid) after taking effect, the client keeps
 *   working from memory, and the next change that can be written writes it too. na_client_info reports the last
 *   problem as "cache":{"problem":"<code>"}.
 *   A refresh reserves the room for its write before it sends the refresh token: under the write lock it creates
 *   its temporary file ("<path>.reserved-<pid>-<random>", held with flock until renamed) pre-allocated
 *   (posix_fallocate) for the file's current size plus 64 KiB. With the disk full the refresh is refused —
 *   cache_write_failed, nothing sent, the sign-in unchanged. Should the write still fail after the server answered
 *   (fsync, rename, tokens larger than the room), the new tokens are kept in memory as above and the message says
 *   the sign-in may need renewing (if the program ends before a later write succeeds, the file holds a refresh token
 *   the server has replaced).
 *   Encryption ("encryption_key"): AES-256-GCM through libcrypto. The file is then binary: "NACE", version 0x01,
 *   an 8-byte key id (the first 8 bytes of SHA-256("nativeauth cache key id" || key)), a 12-byte random nonce (new
 *   for every write), the ciphertext and the 16-byte tag; the first 25 bytes are authenticated too. An encrypted
 *   file is readable only by this library with the key (MSAL for Python reads plain files only).
 *   A plaintext file where the encrypted one should be (a key configured; an empty file is a fresh cache) is not
 *   read — its accounts are never listed or used — and never encrypted unasked: na_client_new answers NA_ESTORAGE
 *   cache_key_invalid saying it is plaintext and how to migrate; one that appears while the client runs is not
 *   loaded, and a change answers cache_key_invalid (kept in memory). "migrate_plaintext_cache": true (only with a
 *   key: invalid_argument otherwise) reads it once, replaces it with its encrypted version under the write lock and
 *   logs that (info); na_client_info then reports "migrate_plaintext_cache":true. Without a key, plaintext files
 *   are read as always (MSAL for Python's).
 *   Keys nobody manages ("key_store", not with "encryption_key": invalid_argument): a random 32-byte key made on
 *   first use (under the cache's write lock, so processes agree on one) and kept, one per cache file, in
 *   "secret_service": the user's Secret Service (org.freedesktop.secrets over the D-Bus session bus: GNOME Keyring,
 *     KWallet, KeePassXC) as an item labelled "NativeAuth token cache key" with the attributes application =
 *     "nativeauth", xdg:schema = "org.nativeauth.CacheKey" and cache_path = the file's canonical path (secret-tool
 *     search application nativeauth finds them). Every D-Bus wait is bounded by "key_store_timeout_ms" (1..60000,
 *     default 2000): no bus, a bus nobody answers, an activation that does not come, or a locked collection with no
 *     one to unlock it is keyring_unavailable within the bound, never a hang;
 *   "kernel_keyring": the user's persistent kernel keyring (keyctl, no daemon; works over SSH and in containers that
 *     allow keyctl), a "user" key "nativeauth:cache-key:<canonical path>". The persistent keyring expires after days
 *     unused and does not survive a reboot: the file is then set aside (see below) and the user signs in again;
 *   "auto": the Secret Service if it answers within the bound, else the kernel keyring; a key found in either is
 *     used.
 *   Keys are named after the file's canonical path (the real directory, symbolic links resolved, and the file's
 *   name), so another spelling of the same file finds its key; a key kept under the path as given (earlier
 *   versions) is found when the canonical name has none and copied to it. The store that holds the key is noted
 *   in "<path>.key-store" (one line, 0600) and asked first, then the others in order, each once: a session bus that
 *   hangs costs nothing when the key is in the kernel keyring. Of the keys found, the one whose id is in the
 *   encrypted file's header is used; when the noted store cannot be reached and the file is encrypted, the answer
 *   is keyring_unavailable rather than a new key (which would set the file aside). The D-Bus client connects only
 *   to a bus run by this user or root (SO_PEERCRED, checked before a byte is sent) and gives a key only to a
 *   Secret Service run by this user or root (GetConnectionUnixUser): another user's listener at the bus address is
 *   keyring_unavailable naming its uid, and "auto" goes on to the kernel keyring.
 *   No store reachable: na_client_new answers NA_ESTORAGE keyring_unavailable, naming what was tried and the two
 *   ways out ("encryption_key", or a plaintext cache asked for explicitly) — never a silent plaintext file. A key
 *   that left its store (the item deleted, the keyring reset, a reboot) while the file exists: the file is set
 *   aside like a corrupt one (never overwritten), the client starts empty, and the next na_get_access_token,
 *   na_call_api or na_get_account answers NA_ESTORAGE cache_key_invalid once. na_client_info reports where the
 *   key is: "cache":{…,"encrypted":true,"key_store":"secret_service"|"kernel_keyring"|"encryption_key"}. The key is
 *   looked up once per client: a cache hit is unchanged. */
int na_client_new(const char *config_json, na_client **out_client, char **out_error_json);

/* Frees a client and everything it holds (tokens are wiped). NULL-safe; freeing twice is detected and ignored.
 * Calls still running on other threads stop waiting and answer "cancelled" (see Threads above). Started
 * operations are cancelled and their done functions have all run when it returns, and token refreshes they had
 * already sent have been finished and stored, which it waits for (see "Asynchronous calls", Freeing). */
void na_client_free(na_client *client);

/* Describes a client: its effective configuration.
 * request_json: "{}" or "{\"v\":1}" (NULL is treated as "{}").
 * result: {"v":1,"version":"0.1.0","config":{"authority":…,"client_id":…,"challenge_types":["oob","password",
 *          "redirect"],"capabilities":[…],"client_capabilities":[…],"connect_timeout_ms":…,
 *          "request_timeout_ms":…,"retry_after_max_s":…,
 *          "cache":{"type":"memory"},"log_level":…,"async_workers":…,
 *          "ca_bundle_source":"config|SSL_CERT_FILE|CURL_CA_BUNDLE|default|fallback",
 *          "ca_bundle":…?,"ca_bundle_system":bool?,"ca_directory":…?,
 *          "proxy":"scheme://host:port"?,"proxy_source":"config|https_proxy|HTTPS_PROXY|all_proxy|ALL_PROXY|none",
 *          "proxy_credentials":true?,"proxy_error":…?,"no_proxy":…?,"no_proxy_source":"config|no_proxy|NO_PROXY"?,
 *          "proxy_ca_bundle":…?,"authority_type":"ciam|aad|oidc","redirect_uri":…?,"post_logout_redirect_uri":…?,
 *          "browser_command":…?,"app_name":…?,"app_version":…?,"dpop":true?}}
 * "ca_bundle" is, for the system's store, the file used ("fallback": libcurl's own is missing here); "proxy" is ""
 * when the configuration says no proxy, and never holds the credentials ("proxy_credentials" says there are some);
 * "proxy_error" says why an environment value is not a proxy address (never the value).
 * A file cache reports {"type":"file","path":…,"encrypted":bool,"key_store"?:…,"migrate_plaintext_cache"?:true,
 * "problem"?:"<code of the last failure>"} (never the key). */
int na_client_info(na_client *client, const char *request_json, char **out_json);

/* ---- Native authentication: sign in, sign up, reset password ---------------------------------------------- */
/*
 * Results are states. Every state that needs more input carries a "flow": an opaque handle naming library-held
 * state (the server's continuation token never leaves the library). Continue it with na_flow_submit. A flow is
 * used by one call at a time, ends when the flow completes or fails for good, and is forgotten after 15 idle
 * minutes (the server's own continuation tokens live about 10 minutes: "flow_expired").
 *
 * States ("status"), each with "v":1 and "flow_type" ("sign_in" | "sign_up" | "reset_password" | "interactive" |
 * "device_code"):
 *   "signed_in"              {"account":{"username","home_account_id","tenant_id","environment","claims":{…}},
 *                             "token":{"access_token","token_type":"Bearer","scopes":[…],"expires_on":<unix s>,
 *                                      "from_cache":false}}
 *   "code_required"          {"flow","sent_to":"o***a@co**o.com","channel":"email","code_length":8,
 *                             "resend_interval"?:<s>}                       → submit_code | resend_code
 *   "password_required"      {"flow"}                                      → submit_password
 *   "attributes_required"    {"flow","required_attributes":[{"name","type","required","regex"?}]}
 *                                                                          → submit_attributes
 *   "mfa_required"           {"flow","methods":[{"id","channel":"email"|"sms","login_hint","challenge_type"}]}
 *                                                                          → request_challenge
 *   "registration_required"  {"flow","methods":[{"id","channel","login_hint","challenge_type"}]}
 *                                                                          → register_method
 *   "sign_up_completed"      {"flow"}                                      → sign_in
 *                            (no "flow" when the server completed the sign-up without allowing an automatic
 *                            sign-in — MSAL iOS reads it the same way: the app then calls na_sign_in)
 *   "password_reset_completed" {"flow"}                                    → sign_in
 *   "browser_pending"        {"flow","authorization_url","redirect_uri","expires_in"}   → wait | submit_redirect
 *   "device_code_required"   {"flow","user_code","verification_uri","verification_uri_complete"?,"expires_in",
 *                             "interval","message"}                       → wait
 *
 * Errors with a "flow" member leave the flow usable (retry: invalid_code, invalid_password, invalid_credentials,
 * attributes_invalid, invalid_contact, contact_blocked, auth_method_blocked, invalid_scope, invalid_argument,
 * network, timeout, tls, server, throttled; and flow_invalid with "expected"). Client-side checks (an empty
 * username, password or code) answer without a network call. A step the server finished part of keeps that part:
 * when the token request after a successful strong-auth registration fails, the flow waits for "sign_in", which
 * repeats only the token request. The ID token of a sign-in is checked ("aud" is the client id, "iss" has the host
 * and tenant of the OIDC discovery issuer, "exp"/"nbf" with 5 minutes of skew; "id_token_invalid" otherwise) —
 * not its signature: it came over verified TLS straight from the token endpoint. OIDC discovery is fetched once
 * per client, at the first sign-in; with "authority_type":"oidc" a discovery request that got no answer fails the
 * call with its own error (network, timeout, tls — naming a proxy that refused — or cancelled), and the next call
 * asks again.
 *
 * Sign-in.  request {"username", "password"?, "scopes"?:[…], "claims"?:{…}, "request_headers"?:{…},
 *   "correlation_id"?}. Sends `scope` = scopes + openid profile offline_access. "request_headers" (checked as the
 *   configuration's) go with every request of this flow, beside the configuration's (replacing one of the same
 *   name); also on na_sign_up and na_reset_password. Answers "signed_in"; without a password,
 *   "password_required" (password accounts) or "code_required" (email one-time-passcode accounts; a given password
 *   is then ignored, as MSAL does); "mfa_required" or "registration_required" when the server asks for strong
 *   authentication and the configuration's "capabilities" allow it (otherwise browser_required, whose message
 *   names the capability when the server's answer tells which).
 *   Errors: invalid_username, invalid_password (an empty password), user_not_found, invalid_credentials (with a
 *   "flow" to retry the password), password_change_required, browser_required, invalid_client, invalid_scope,
 *   declined_scopes, id_token_invalid, flow_expired, flow_invalid, cancelled (signed out during the call). */
int na_sign_in(na_client *client, const char *request_json, char **out_json);

/* Sign-up.  request {"username", "password"?, "attributes"?:{"displayName":"Ann", "city":"Oslo", …},
 *   "request_headers"?:{…}, "correlation_id"?}.
 *   Attribute values are strings (numbers and booleans are turned into strings; arrays of strings are joined with
 *   commas). First answer: "code_required" (the email is verified first); then "password_required" (when no
 *   password was given), "attributes_required", and "sign_up_completed".
 *   Errors: invalid_username, user_already_exists, invalid_password ("reason": the server's suberror, e.g.
 *   password_too_weak or password_too_short, or "empty"), attributes_invalid ("attributes": [names]),
 *   browser_required, invalid_client, flow_expired, flow_invalid. */
int na_sign_up(na_client *client, const char *request_json, char **out_json);

/* Password reset.  request {"username", "request_headers"?:{…}, "correlation_id"?}. Answers "code_required", then
 *   "password_required" (the new password), then — after the library polls the server's completion endpoint —
 *   "password_reset_completed".
 *   Polling follows the server's poll_interval (0 or absent: 2 s; at most 10 s) while it answers in_progress or
 *   not_started, for at most 300 s; "failed" ends the flow with password_reset_failed; a password-policy error
 *   during polling (invalid_password) leaves the flow waiting for another password; a cancel from another thread
 *   ends the wait with "cancelled".
 *   Errors: invalid_username, user_not_found, user_has_no_password, browser_required, invalid_client,
 *   flow_expired, flow_invalid (the code and the new password are checked by na_flow_submit). */
int na_reset_password(na_client *client, const char *request_json, char **out_json);

/* Continues a flow.  request {"flow":"f_…", "action":…, …}. "action" may be left out when the request carries
 * "code" (submit_code), "password" (submit_password) or "attributes" (submit_attributes). Actions:
 *   "submit_code"        {"code"}                 the one-time code (sign-in, sign-up, reset, MFA, registration)
 *   "resend_code"        {}                       sends a new code; the previous one stops working
 *   "submit_password"    {"password"}             sign-in password, sign-up password, or the new password (reset)
 *   "submit_attributes"  {"attributes":{…}}       sign-up attributes
 *   "request_challenge"  {"method_id"?}           MFA: send a code to a method of "mfa_required". Without
 *                                                 method_id the server uses the user's default method (as MSAL
 *                                                 Android); when the user has several and no default, the answer
 *                                                 is "mfa_required" again with the methods fetched anew: choose one
 *   "register_method"    {"contact", "method_id"?} registration: the email address to register, or the phone
 *                                                 number (E.164: "+15555550123") for a "channel":"sms" method
 *                                                 (default method: the first); answers "code_required", or
 *                                                 "signed_in" when the contact needs no verification (it is the
 *                                                 sign-in address)
 *   "sign_in"            {"scopes"?, "claims"?}   after "sign_up_completed" or "password_reset_completed" (or to
 *                                                 retry the token request after a registration, see above)
 *   "wait"               {"timeout_ms"?}          browser sign-in: serves the loopback listener until the redirect
 *                                                 with this sign-in's "state" arrives → "signed_in"; device code:
 *                                                 polls at "interval" (+5 s per slow_down) → "signed_in". When
 *                                                 timeout_ms (default 300000 / 900000) passes first: the same
 *                                                 pending state again, flow intact. At the sign-in's own expiry:
 *                                                 "timeout" (browser) or "flow_expired" (device code), flow ended
 *   "submit_redirect"    {"redirect_url"}         browser sign-in: the redirect as the app received it (its own
 *                                                 web view or URI scheme handler) or its user pasted it (spaces
 *                                                 and line breaks around it are ignored); must be the flow's
 *                                                 redirect_uri (else invalid_argument, flow and listener kept) with
 *                                                 the flow's "state" (else "server", flow ended)
 *   "cancel"             {}                       forgets the flow; answers {"v":1,"status":"cancelled"}. It may be
 *                                                 sent from another thread while a call waits on the flow (reset
 *                                                 polling, "wait") or while its step is on the wire: that call
 *                                                 answers NA_ESTATE "cancelled" promptly, a late answer of the
 *                                                 server is discarded, nothing it finishes afterwards revives the
 *                                                 flow or is cached (nobody is signed in by it), and a browser
 *                                                 sign-in's listening socket is closed. A cancel that comes after
 *                                                 the flow signed the user in (or raced that step and lost) answers
 *                                                 NA_ESTATE "flow_invalid": nothing was cancelled
 * An action the flow is not waiting for answers NA_ESTATE "flow_invalid" with "expected":<action> and leaves the
 * flow as it was. Unknown or finished flows: "flow_invalid"; expired ones: "flow_expired".
 * Errors: invalid_code, invalid_password, invalid_credentials, attributes_invalid, user_already_exists,
 *   invalid_contact, contact_blocked, auth_method_blocked, password_change_required, browser_required, invalid_scope,
 *   declined_scopes, id_token_invalid, password_reset_failed, flow_expired, flow_invalid, cancelled, access_denied,
 *   interaction_required, timeout. */
int na_flow_submit(na_client *client, const char *request_json, char **out_json);

/* ---- Browser sign-in and device code --------------------------------------------------------------------- */

/* A browser callback: opens url (valid during the call only) in a browser and returns 0, or non-zero when it
 * cannot. It is called on the thread of the sign-in (or sign-out) call and must return without waiting for the
 * sign-in: the library serves the redirect only after it returns. The url is a one-time address on the library's
 * loopback listener (http://localhost:<port>/<random>, or 127.0.0.1), which sends the browser on to the provider:
 * never the authorization or end-session URL itself, whose secrets a command line would show to every local user.
 * (A sign-in with "browser":"none" opens nothing: it answers the authorization URL for the app to show.) */
typedef int (*na_browser_fn)(const char *url, void *user_data);

/* Sets (or, with fn NULL, removes) the client's browser callback. Without one, URLs are opened with the
 * configured "browser_command", else each command of $BROWSER (colon-separated), else the default opener: xdg-open on
 * a desktop; under WSL ($WSL_DISTRO_NAME, or "Microsoft"/"WSL" in /proc/version) the Windows browser (wslview, else
 * explorer.exe); none in an SSH session ($SSH_CONNECTION or $SSH_TTY), nor without a display (neither $DISPLAY nor
 * $WAYLAND_DISPLAY; a container without one too) — there a sign-in answers browser_unavailable at once, its message
 * saying why, instead of waiting on an opener that cannot show anything (an explicit browser_command or $BROWSER is
 * still run: a terminal browser, a remote editor's helper). Commands are found on $PATH (absolute directories only)
 * and run without a shell parsing them, as children of a /bin/sh that only waits for them, with the host's
 * environment without its NATIVEAUTH_* variables, stdin/stdout/stderr on /dev/null and default signal handling. The
 * library does not wait for a command before serving its page: one that exits non-zero (explorer.exe: other than 0 or
 * 1) before the page was fetched failed, and the next is tried; once the page was fetched, or the sign-in's wait
 * ends, a command still running (a browser itself) is let go — its /bin/sh is killed and reaped, and the command is
 * left to init, which reaps it: no zombie, and no thread of the library, outlives the call (or na_client_free). As
 * for the log callback: this call installs the new callback at once and waits until invocations of the old one
 * already running on other threads have returned — once it returns the old callback and its user_data are never used
 * again (they may be freed); no invocation waits for it. A sign-in uses the callback set when it opens the browser,
 * not the one set when it started. The callback may call into the library, but calling this function on the same
 * client from inside it answers NA_ESTATE and changes nothing (instead of a deadlock).
 * Returns NA_OK, NA_EINVAL (bad handle) or NA_ESTATE. */
int na_client_set_browser_callback(na_client *client, na_browser_fn fn, void *user_data);

/* Signs a user in through the browser (authorization code + PKCE S256, RFC 8252 loopback redirect), as MSAL's
 * interactive sign-in.  request {"scopes"?:[…], "login_hint"?, "prompt"?: "select_account"|"login"|"consent"|
 * "none"|"create", "domain_hint"?, "claims"?:{…}, "extra_query_parameters"?:{"name":"value"}, "response_mode"?:
 * "query"|"form_post", "browser"?: "system"|"none", "timeout_ms"?: 300000, "wait_ms"?, "correlation_id"?} (NULL: {}).
 * The authorize URL comes from OIDC discovery: response_type=code, client_id, redirect_uri, scope (scopes + openid
 * profile offline_access), state, nonce, code_challenge (S256), client_info=1 (Entra), and the options (the
 * extra parameters may not replace these). A loopback http redirect URI gets a listener on its port (an ephemeral
 * one when it names none; a fixed port can be used by one sign-in after another).
 * "browser":"system" (default): a browser the library launches is never given that URL, whose secrets its command
 * line would show every local user: the browser callback (else browser_command, $BROWSER, the default opener: see
 * na_client_set_browser_callback) gets a one-time start page on the listener, http://<redirect host>:<port>/<192
 * random bits>, served from the moment the browser is started. Its first fetch answers 302 to the authorize URL
 * (no-store, no-referrer) with a cookie of a random name (HttpOnly, SameSite=Lax) the redirect must bring back; a
 * second fetch stops the sign-in: the call answers NA_ESTATE "flow_invalid" (another program may have read the
 * address; start again). The call waits up to timeout_ms: the answer is "signed_in" with "flow_type":"interactive";
 * with "wait_ms" (0..3600000) it waits that long at most, then answers "browser_pending" (the flow goes on: "wait"
 * serves the listener again, "submit_redirect" takes the address the browser ended on — the user may paste it when
 * that browser could not load it), so an app can say what it waits for and offer a paste.
 * "browser":"none" opens nothing and answers "browser_pending" with the authorize URL itself as "authorization_url":
 * show it to the user (who may open it on another device) or load it in the app's own web view, but never put it on
 * a command line. Continue with na_flow_submit "submit_redirect" with the redirect the app captured or the user
 * pasted (such as http://localhost:<port>/?code=…&state=…, loaded or not: the listener is not needed for it),
 * or "wait", which serves the listener for a browser on this machine (an app that must be able to cancel uses
 * these; cancel from another thread). The redirect must carry this sign-in's "state" (another is refused:
 * "server", and the sign-in ends), and its code is redeemed with the PKCE verifier, which never leaves the library;
 * no start page was fetched, so no cookie is asked for. A redirect URI that is not loopback http has no listener:
 * "browser":"none" and submit_redirect only.
 * Paste-back, for a machine without a browser (an SSH session, a container; the error of "browser":"system" there is
 * browser_unavailable): start with "browser":"none", show "authorization_url" and ask for the address the browser
 * ended on. The user signs in on any device; its browser goes to http://localhost:<port>/?code=…&state=… (the
 * redirect URI), which that device cannot load — say so — and the user copies it from the address bar; pass it to
 * submit_redirect. The code is useless without the PKCE verifier, which stays here, and "state" binds the address
 * to this sign-in. Meanwhile "wait" (with a short timeout_ms, between reads of the user's input) lets a browser on
 * this machine complete it instead. Entra's https://login.microsoftonline.com/common/oauth2/nativeclient redirect
 * URI, where the app registration has it, works the same way: configure it as "redirect_uri" (no listener; the page
 * it ends on is blank) and submit the address the user pastes. The nativeauth command does this (login
 * --no-browser); bindings/python/examples/paste_back.py and bindings/go/examples/pasteback show it.
 * The listener accepts only its redirect path with this sign-in's "state" and, after a start page, for response_mode
 * query, the cookie (a form_post redirect is a cross-site POST, which SameSite=Lax cookies do not accompany); other
 * requests get an error page and the wait goes on. A connection from a socket of another user (by
 * /proc/net/tcp{,6}; allowed when not found there) gets a 403 page and is ignored. The code is redeemed with the
 * verifier and the ID token is checked — signature (RS256) against the discovery jwks_uri keys, "iss", "aud",
 * "exp"/"nbf" with 5 minutes of skew, "nonce" — before the account and tokens are cached (a sign-in adds or replaces
 * that user's account). A provider that advertises RFC 9207 must send "iss" on the redirect, and a present "iss"
 * must be its.
 * The redirect's "error": access_denied → access_denied; interaction_required, login_required, consent_required →
 * interaction_required; others → server with "server":{"error"}.
 * When no browser can be opened — no command could be started, every one exited non-zero before the start page was
 * fetched, or the machine has no default opener — the error says why in its message (never the URL) and carries
 * "authorization_url" (the start page), but the sign-in has ended and its listener is closed: to show the user an
 * address, start again with "browser":"none" (paste-back, above).
 * Errors: browser_unavailable (NA_EINTERACTION), access_denied, interaction_required, id_token_invalid, timeout,
 * cancelled, flow_invalid (start page fetched twice), invalid_scope, declined_scopes, network (cannot listen),
 * server. */
int na_sign_in_interactive(na_client *client, const char *request_json, char **out_json);

/* Signs a user in on a machine without a browser (RFC 8628 device authorization grant).  request {"scopes"?:[…],
 * "correlation_id"?} (NULL: {}). Uses discovery's device_authorization_endpoint and answers
 * "device_code_required" with "user_code", "verification_uri" (as the server sent it), "verification_uri_complete"?,
 * "expires_in", "interval" and "message" (the server's, else composed from the URI and the code). Continue with
 * na_flow_submit "wait", which polls and answers "signed_in", or "device_code_required" again at its own
 * timeout_ms. When the token answer has no ID token, the account comes from the userinfo_endpoint.
 * Errors: not_supported (the provider has no device endpoint), access_denied (the user refused), flow_expired (the
 * code expired), cancelled, network, server. */
int na_sign_in_device_code(na_client *client, const char *request_json, char **out_json);

/* ---- Tokens, APIs, account, sign-out ------------------------------------------------------------------------ */

/* An access token for scopes.  request {"scopes"?:[…], "force_refresh"?:false, "claims"?:{…}, "correlation_id"?,
 * "account"?} result {"v":1,"access_token","token_type":"Bearer","scopes":[…],"expires_on":<unix s>,"from_cache":bool}
 * "token_type" is "DPoP" for a token bound to the account's key (see "dpop" in na_client_new): it must be sent as
 * "Authorization: DPoP" with a proof (na_call_api does; na_dpop_proof makes one), never as a bearer token.
 * "account" names the account (its "home_account_id", or its username in any case); without it the only signed-in
 * account is meant: none answers "no_account", several answer "account_required" with "accounts" listing them. The
 * cache holds any number of accounts; each is renewed the same way, whichever flow signed it in.
 * Without "scopes" (or with an empty list, or OIDC scopes only — openid, profile, offline_access, email) the answer
 * is the token for the sign-in's own scopes, as MSAL iOS's native-auth getAccessToken() without scopes; a request for
 * OIDC scopes only is never matched against a token cached later for some API.
 * A cached token whose scopes include the request is served without a network call while more than 5 minutes of
 * its lifetime remain — MSAL's fixed expiry buffer (MSAL's common core MSIDAccessToken: s_expirationBuffer = 300;
 * MSAL Python: expires_on - now < 5*60 means expired), so a token issued for 5 minutes or less is never served from
 * the cache. Lifetimes ("expires_in", "ext_expires_in", "refresh_in") may come as numbers or numeric strings and are
 * clamped to a year; a missing, zero, negative or non-numeric "expires_in" is refused ("server"). Past the server's
 * "refresh_in" the library refreshes early and still serves the cached token if that refresh fails; while the server
 * is unavailable (no connection, timeout, 5xx, throttled) a token past its expiry is served until its
 * "ext_expires_in". Otherwise one refresh-token request goes to the token_endpoint of OIDC discovery (fetched once
 * per client and required to be on the authority's origin), or — when discovery is unavailable — to the authority's
 * own /oauth2/v2.0/token. When the server grants fewer scopes than asked, the token is cached under what it granted
 * and the answer is "declined_scopes" with "declined" and "granted" lists (MSAL iOS's declined-scopes error).
 * The refresh token is dropped only when the server says it is dead: invalid_grant with suberror bad_token (as MSAL
 * iOS and Android), expired_refresh_token, or AADSTS 700082, 70008, 700084, 50173. Consent or MFA demanded for one
 * scope set (interaction_required) leaves the user signed in for the others; network errors, 5xx and 429 never
 * touch it.
 * Concurrent calls share one refresh: only one refresh runs per client at a time (and, with a file cache, per file
 * across processes: see "The file cache"), callers asking for the same scopes wait for it and share its result,
 * and the rotated refresh token replaces the old one atomically, so a refresh token is never presented twice. A new
 * token replaces cached tokens whose scopes overlap it (MSAL's rule).
 * Interaction errors carry "login_hint" (the account's, for na_sign_in_interactive) and, when the server sent a
 * claims challenge, "claims" — a string holding the challenge's JSON; pass it back as is as the "claims" of
 * na_sign_in_interactive (requests take "claims" as an object or as a string holding one).
 * Errors: no_account (NA_ENOTFOUND), account_required, interaction_required and refresh_token_expired
 * (NA_EINTERACTION: sign in again; the dead refresh token is dropped), password_change_required, browser_required,
 * invalid_scope, declined_scopes, cache_write_failed (a rotated refresh token could not be written: kept in memory;
 * or no room for it on the disk: the refresh was not sent — see the cache in na_client_new), timeout (a
 * refresh another call or process is making did not finish in time), cancelled (the client is being freed),
 * reentrant_call (called from a callback on the thread that is refreshing). */
int na_get_access_token(na_client *client, const char *request_json, char **out_json);

/* Calls an API with a bearer token — or a DPoP-bound one as "Authorization: DPoP <token>" with a new proof (its
 * "ath" the token's hash) in a "DPoP" header; the API's 401 nonce challenge (WWW-Authenticate: DPoP
 * error="use_dpop_nonce" with a DPoP-Nonce) is answered by one more request with that nonce, once per send; the
 * challenges below are read from the DPoP scheme's challenge too.
 * request {"url", "method"?:"GET", "headers"?:{"name":"value"}, "body"?: string (sent as is) | object/array (sent
 * as JSON with Content-Type application/json unless given), "scopes"?:[…], "force_refresh"?, "account"?,
 * "correlation_id"?}
 * result {"v":1,"status":200,"headers":{"content-type":…},"body": parsed JSON | text} ("body_base64" when the body
 * is not UTF-8; bodies up to 4 MiB are read).
 * The token comes from na_get_access_token's logic. The library answers one challenge of the API's 401 and retries
 * once: WWW-Authenticate error="invalid_token" → a refreshed token; a claims challenge (Bearer
 * error="insufficient_claims", claims="<base64, base64url or JSON>": Conditional Access, Continuous Access
 * Evaluation — give "client_capabilities":["cp1"] to receive them) → a token with those claims, never from the cache
 * (cached as usual). When that token needs the user, the call answers interaction_required with "claims" (the JSON
 * text) for na_sign_in_interactive. A second challenge is the API's answer (NA_OK, status 401), never a loop. An
 * HTTP error status from the API is a result (NA_OK), not a library error.
 * Tokens are only sent over https, or http to localhost, 127.0.0.1 or [::1]. The request may not set Authorization
 * or DPoP, nor the headers that frame or route it (Content-Length, Transfer-Encoding, Host, Connection, Keep-Alive,
 * Upgrade, TE, Trailer, Expect, Proxy-Authorization, Proxy-Connection); header names must be HTTP tokens, each
 * once in any case, and values at most 8192 bytes without control characters but tab (CR, LF, NUL, DEL, …; an
 * empty value, or one of blanks only, is sent as an empty header); a header named
 * as one the library sends itself (User-Agent) replaces it; TRACE, TRACK and CONNECT are refused ("invalid_argument"
 * with "field"). A JSON body
 * nested deeper than 64 levels comes back as text with "body_too_deep": true (a body whose brackets nest that deep
 * but that cannot be JSON is text, unflagged). "scopes", "account" and "correlation_id" as for na_get_access_token.
 * Errors: as na_get_access_token. */
int na_call_api(na_client *client, const char *request_json, char **out_json);

/* A signed-in account.  request {"account"?, "include_id_token"?:false} (NULL is read as {}).
 * result {"v":1,"account":{"username","home_account_id":"<uid>.<utid>","tenant_id","environment",
 *         "claims":{…ID token claims…},"id_token"?}}.  "account" as for na_get_access_token.
 * Errors: no_account (NA_ENOTFOUND), account_required. */
int na_get_account(na_client *client, const char *request_json, char **out_json);

/* Every signed-in account, ordered by username.  request {"include_id_token"?:false} (NULL is read as {}).
 * result {"v":1,"accounts":[{account as na_get_account}…]} (an empty list when nobody is signed in). */
int na_get_accounts(na_client *client, const char *request_json, char **out_json);

/* Signs out: forgets an account's tokens, locally as MSAL's native sign-out.  request {"account"?, "all"?:false,
 * "browser"?: "none"|"system"} (NULL is read as {}). Without "account" the only account is signed out; with "all"
 * every account. With "all", or when no account is left, open flows are cancelled too. Signing out when nobody is
 * signed in is not an error. A call in flight for the account (a sign-in or refresh) stores nothing afterwards.
 * When one account was signed out and the provider has an end_session_endpoint, the result carries
 * "end_session_url" (with id_token_hint, post_logout_redirect_uri when configured, client_id, and on Entra
 * logout_hint from the ID token's login_hint claim); "browser":"system" opens it too, through a one-time URL on a
 * short-lived listener on 127.0.0.1 (302 to the end-session URL: the ID token never reaches a command line). The
 * call serves that listener for up to 10 s after the browser was opened; "browser_opened" is true only when the
 * browser fetched it.
 * result {"v":1,"status":"signed_out","was_signed_in":bool,"accounts":["<home_account_id>"…],"end_session_url"?,
 *         "browser_opened"?}.
 * Errors: no_account (an "account" that is not signed in), account_required (several accounts, no "account", no
 * "all"), cache_write_failed (signed out in memory, but the file still holds the account). */
int na_sign_out(na_client *client, const char *request_json, char **out_json);

/* ---- Sender-constrained tokens (DPoP, RFC 9449) ------------------------------------------------------------- */

/* A DPoP proof for a request the app sends itself with a DPoP-bound token ("token_type":"DPoP" in
 * na_get_access_token's answer). Such a token is useless without a proof: send it as
 *     Authorization: DPoP <access_token>
 *     DPoP: <proof>
 * with a new proof for every request (each has a unique "jti"; servers refuse one seen before).
 * request {"method":"GET", "url":"https://api.example.com/items?x=1", "access_token"?:"…", "nonce"?:"…",
 *          "account"?}
 *   "url": absolute https (or http to localhost, 127.0.0.1, [::1]); the proof's "htu" is it without query and
 *   fragment. "access_token": the token the request presents; the proof then carries its hash ("ath"): give it for
 *   every request to a resource, leave it out for one to a token endpoint. "nonce": the server's latest DPoP-Nonce
 *   header (RFC 9449 §8, §9); without it the last nonce the library saw from that origin (in its own token requests
 *   and na_call_api), if any. A 401 whose WWW-Authenticate is DPoP error="use_dpop_nonce" (na_parse_www_authenticate
 *   reads it) asks for one more request, with a proof carrying the DPoP-Nonce it sent. "account" as for
 *   na_get_access_token.
 * result {"v":1,"proof":"eyJ0eXAiOiJkcG9wK2p3dCIs…"}: a JWS (ES256) whose header is {"typ":"dpop+jwt","alg":"ES256",
 *   "jwk":{"kty":"EC","crv":"P-256","x","y"}} and whose claims are "jti", "htm", "htu", "iat", and "nonce" and "ath"
 *   when given. The private key never leaves the library; no call exports it.
 * Example:
 *     char *tok = NULL, *proof = NULL;
 *     na_get_access_token(client, "{\"scopes\":[\"todolist.read\"]}", &tok);   // {"token_type":"DPoP",…}
 *     // build {"method":"GET","url":"https://api.example.com/todolist","access_token":"<from tok>"} as req
 *     na_dpop_proof(client, req, &proof);                                    // {"v":1,"proof":"eyJ…"}
 *     // GET with "Authorization: DPoP <access_token>" and "DPoP: <proof>"; free both with na_string_free
 * Errors: invalid_argument (with "field"), no_account, account_required, dpop_unsupported (the account's tokens are
 * bearer tokens: it was not signed in with DPoP). */
int na_dpop_proof(na_client *client, const char *request_json, char **out_json);

/* ---- Headers ------------------------------------------------------------------------------------------------ */

/* Parses a WWW-Authenticate header (RFC 9110 §11.6.1): for hosts that call APIs themselves and must act on a claims
 * challenge (Conditional Access, Continuous Access Evaluation), such as Microsoft Graph's
 *     Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize",
 *       client_id="00000003-0000-0000-c000-000000000000", error="insufficient_claims", claims="eyJhY2Nlc3Nf…"
 * A pure function: no client, no I/O, no log; like every call it sets *out_json (NA_EINVAL when out_json is NULL).
 * header: the field's value without "WWW-Authenticate:", UTF-8, at most 65536 bytes; the values of several such
 *   fields of one response may be joined with ", " (na_call_api's "headers" holds them so).
 * result {"v":1,"challenges":[{"scheme":"Bearer","params":{"realm":"","error":"insufficient_claims",…},
 *         "token68"?:"…","claims"?:"<JSON text>"}…],"claims"?:"<JSON text>"}
 * The grammar: challenge = auth-scheme [ 1*SP ( token68 / #auth-param ) ], auth-param = token BWS "=" BWS ( token /
 * quoted-string ). A comma separates parameters and challenges alike: after a comma, a token followed by "=" is
 * another parameter, any other token starts a challenge. Empty list elements are skipped; a tab counts as a space.
 * "scheme" is as sent (schemes are case-insensitive: compare it so); "params" holds every auth-param, its name in
 * lower case, its value unquoted with its \-escapes removed; a name sent twice in one challenge keeps its first
 * value. "token68" is the other form (Negotiate abc==), as sent; a challenge has one or the other.
 * A challenge's "claims" is its "claims" parameter as JSON text: the base64 of it (standard or URL alphabet, padded
 * or not; as MSAL.NET and the Azure SDK for Python decode it) or the text itself, kept only when it is a JSON object
 * nested at most 64 levels; otherwise it is left out (the raw value stays in "params").
 * The top-level "claims" is that of the first Bearer (or DPoP, RFC 9449's scheme for DPoP-bound tokens) challenge
 * whose "error" is "insufficient_claims" (in any case) and that has one. Pass it as is as the "claims" of
 * na_get_access_token or na_sign_in_interactive.
 * An empty header, or commas only, has no challenges: {"v":1,"challenges":[]}.
 * Errors: invalid_argument (header NULL, larger than 65536 bytes, not UTF-8, or not of the grammar — an
 * unterminated quoted string, a control character, "=" without a name, a parameter after a token68: the message
 * names the byte, never the text). */
int na_parse_www_authenticate(const char *header, char **out_json);

/* ---- Logging --------------------------------------------------------------------------------------------- */

#define NA_LOG_OFF     0
#define NA_LOG_ERROR   1
#define NA_LOG_WARNING 2
#define NA_LOG_INFO    3
#define NA_LOG_VERBOSE 4

/* A log callback. level is NA_LOG_ERROR..NA_LOG_VERBOSE; message is one line of UTF-8; correlation_id is the
 * request's client-request-id or NULL. Both strings are valid only during the call. The callback may be called
 * from any thread that is inside a library call, concurrently, but never while that thread holds one of the
 * library's locks. It may call into the library, the same client included (lines logged by such calls reach it
 * too); a call that would need what the logging thread holds answers "reentrant_call" at once; it cannot replace
 * itself (see below). */
typedef void (*na_log_fn)(int level, const char *message, const char *correlation_id, void *user_data);

/* Installs (or, with fn NULL, removes) the client's log callback and sets its level (NA_LOG_OFF..NA_LOG_VERBOSE),
 * replacing the configured "log_level". Logging is silent by default. Log lines never contain secrets or
 * usernames; text that came from outside (a server's error code, an attribute name) is stripped of control and
 * bidirectional-formatting characters and bounded to 200 characters, as in every error message. Replacing or
 * removing a callback installs the new one at once (it may be called before this function returns) and waits until
 * invocations of the old one already running on other threads have returned: once this function returns, the old
 * callback is never called again and its user_data may be freed. No log line waits for it (a log callback may wait
 * for the client's other calls, as na_client_free does, while another thread replaces the callback). Returns NA_OK,
 * NA_EINVAL (bad handle or level), or NA_ESTATE when called from inside this client's own log callback (nothing is
 * changed; waiting for itself would never end). */
int na_client_set_log_callback(na_client *client, int level, na_log_fn fn, void *user_data);

/* ---- Asynchronous calls ---------------------------------------------------------------------------------- */
/*
 * Every blocking operation above can be started instead of called, for programs built around an event loop (GLib,
 * Qt, libuv, asyncio, Go): the call returns at once and a completion function receives exactly the document the
 * blocking call would have returned.
 *
 *   call             the operation's name without "na_": "client_info", "sign_in", "sign_up", "reset_password",
 *                    "flow_submit", "sign_in_interactive", "sign_in_device_code", "get_access_token", "call_api",
 *                    "get_account", "get_accounts", "sign_out", "dpop_proof"
 *   request_json     as for the blocking call (copied: it may be freed as soon as na_start returns)
 *   done             called exactly once for every operation na_start accepted — with the blocking call's return
 *                    code and document, or NA_ESTATE "cancelled" — whatever happens meanwhile (na_op_cancel,
 *                    na_op_free, na_client_free). result_json is never NULL and is valid only during the call (the
 *                    library wipes and frees it afterwards; copy what you keep). done may call any function of the
 *                    library, on this client too (start more calls, free its own operation, free the client).
 *   op_out           may be NULL (no handle: the call cannot be cancelled). Otherwise receives the operation's
 *                    handle before the operation can run, so done may already see it set. An na_op is opaque and
 *                    not an address, like na_client: a freed one is detected (NA_EINVAL), never dereferenced.
 *
 * Where done runs.  By default on one of the client's worker threads: operations run on a pool of at most
 *   "async_workers" threads per client (na_client_new; 1..64, default NA_ASYNC_WORKERS), started when needed and
 *   ended after 10 idle seconds; operations beyond that wait in start order. A started sign-in waiting for a
 *   browser or a device-code approval holds one worker while it waits. Once the program asked for the client's
 *   event fd (na_client_event_fd), every done not yet run — of operations started before or after — runs only
 *   inside na_client_dispatch (or na_client_free), on the thread that calls it, one at a time, in completion order:
 *   operations still run on the workers, but none of the program's code does. The log and browser callbacks are
 *   called on the worker running the operation, as from a blocking call — except the log lines of a token refresh
 *   (na_get_access_token, na_call_api), which a started operation makes on a library thread of its own (see
 *   Cancelling).
 *
 * Cancelling.  na_op_cancel ends the operation's wait promptly — the HTTP request in flight (aborted), a refresh
 *   another call or process is making, a browser redirect, a device-code approval, a poll — or takes it out of the
 *   queue. It answers NA_OK when the operation will end with NA_ESTATE "cancelled": a sign-in cancelled this way
 *   stored nothing (as with a flow's "cancel"; a sign-in whose tokens were already stored, and a sign-out or a
 *   flow cancel already running, are past cancelling: NA_ESTATE, and done gets the real result). A flow stays
 *   as the blocking call would leave it on that error: a step whose request was aborted, or that had not begun,
 *   keeps its flow and the error names it ("flow": retry the step, as after a network error); a cancelled wait
 *   (browser, device code, password-reset poll) ends the flow. A call_api whose request already reached the API
 *   may have had its effect there. done still runs, once, after na_op_cancel returns (on a worker, or in
 *   na_client_dispatch).
 *   A token refresh (get_access_token, call_api) is not aborted once its request was sent: the server has then
 *   redeemed the refresh token (and, rotating them, issued the only one that still works), so the refresh is
 *   finished in the background — bounded by request_timeout_ms — and its tokens are stored, while the operation
 *   ends "cancelled" at once. Other calls waiting for that refresh get its token; the cache file's refresh lock is
 *   held until it was stored. Cancelled before it was sent, the refresh ends and sends nothing. A sign-in's token
 *   request (a code from the browser or the device-code poll, native authentication) is aborted: the sign-in is
 *   what the cancel refuses, and it stores nothing (the code it redeemed was its own; no sign-in is lost).
 *
 * Freeing.  na_client_free cancels every operation of the client still queued or running, waits for them to end,
 *   and has every done not yet run called before it returns — on the freeing thread for operations that had not
 *   started and in event-fd mode, else on their worker. It also waits for the token refreshes of cancelled
 *   operations that are being finished in the background (see Cancelling: bounded by request_timeout_ms for each
 *   request the refresh still makes, a Retry-After within retry_after_max_s, and the cache file's lock wait), so
 *   their tokens are stored. So after na_client_free returns, no done of that client runs again, no log line of its
 *   operations reaches the log callback, and every user_data may be freed. Called from inside a done of that client,
 *   it waits for the others but not for the done it is called from — and, when that done was run by
 *   na_client_dispatch or by another na_client_free, the completions that call had not reached yet are run (on this
 *   thread) before it returns, and that call runs no more. Called from a log or browser callback of a running
 *   operation, it does not wait for that operation, whose done runs on its worker once the callback returned (in
 *   event-fd mode too: no dispatch follows), nor, from a log callback, for the refresh logging. When two threads, each
 *   inside a done or callback of the client, free it at once, the later of the two calls does not wait for what the
 *   earlier one's thread is inside (it cannot end before that na_client_free returned): the later returns first,
 *   the earlier once the later one's operation ended and its done ran; and no na_client_free waits for a background
 *   refresh whose own log callback is freeing the client. Do not call it while holding a lock that a done or the
 *   log callback of that client takes.
 */
#define NA_ASYNC_WORKERS 4

typedef struct na_op na_op;

/* A completion function. rc: NA_OK or an NA_E* code; result_json: the result or error document (valid during the
 * call only); user_data: as given to na_start. */
typedef void (*na_done_fn)(int rc, const char *result_json, void *user_data);

/* Starts an operation (see above). Returns NA_OK (done will run exactly once), or — done will never run —
 * NA_EINVAL (client NULL or not live, call NULL or not one of the names above, done NULL) or NA_ENOMEM. Errors of
 * the request document (invalid JSON, a missing field) are the operation's result, given to done. */
int na_start(na_client *client, const char *call, const char *request_json, na_done_fn done, void *user_data,
             na_op **op_out);

/* Asks the operation to end with "cancelled" (see Cancelling above). Does not wait. Returns NA_OK (done will receive
 * NA_ESTATE "cancelled"), NA_ESTATE (too late: it ended, or is past cancelling; done gets or got its real result),
 * or NA_EINVAL (op NULL or freed). May be called from any thread, also from inside a done, log or browser
 * callback. */
int na_op_cancel(na_op *op);

/* Releases an operation's handle: the operation goes on (unless cancelled) and done still runs exactly once. NULL-
 * safe; freeing twice is detected and ignored. Free every handle na_start gave you, before or after its done. */
void na_op_free(na_op *op);

/* Gives the client's event fd, switching the client to running every done inside na_client_dispatch (see Where
 * done runs; there is no way back). The fd is readable while completions wait; it belongs to the library (never
 * read, write or close it; it is closed by na_client_free) and is the same for every call. Add it to the program's
 * loop — g_unix_fd_add, QSocketNotifier, uv_poll_start, asyncio's add_reader, epoll — and call
 * na_client_dispatch when it is readable; remove it from the loop before na_client_free. Returns NA_OK, NA_EINVAL
 * (client not live, fd_out NULL), or NA_EINTERNAL (the system refused an eventfd). */
int na_client_event_fd(na_client *client, int *fd_out);

/* Runs the completions waiting on the client when it is called (each done, one at a time, in completion order) on
 * the calling thread, and returns how many it ran (0 when none waited: it never blocks), or NA_EINVAL for a client
 * that is not live. Completions that arrive while it runs — those of operations a done started included — are left
 * for the next call (the fd is readable again). May be called from any thread, also before the event fd was asked
 * for (nothing waits then), and from inside a done of the client: that inner call runs the completions waiting
 * then (those the outer call had not reached yet included), and the outer call does not run them again. A done
 * that frees the client ends the call: the completions it had not reached yet have run before na_client_free
 * returned (see Freeing above). */
int na_client_dispatch(na_client *client);

#ifdef __cplusplus
}
#endif

#endif /* NATIVEAUTH_H */
