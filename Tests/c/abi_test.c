/* abi_test.c — the C ABI called as a C program calls it: bad input of every kind must give the documented
 * status and an error document, never a crash; nothing may leak. Built (with abi_started.c: the started calls)
 * through pkg-config from an install into a temporary prefix with -std=c99 -Wall -Wextra -Werror -pedantic and
 * run under valgrind by `make test`, and against ASan- and TSan-built libraries (make test-asan, test-tsan). */
#define _POSIX_C_SOURCE 200809L
#include "abi_test.h"
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int failures = 0;
int checks = 0;
const char *GOOD = "{\"v\":1,\"authority\":\"http://127.0.0.1:9/contoso.onmicrosoft.com\","
                   "\"client_id\":\"00001111-aaaa-2222-bbbb-3333cccc4444\"}";

/* Creating a client from `config` must fail with `status`, error code `code` and (if given) `field`. */
static void expect_new_error(const char *name, const char *config, int status, const char *code, const char *field) {
    na_client *c = (na_client *)0x1; /* must be overwritten with NULL */
    char *err = NULL;
    char want[256];
    int rc = na_client_new(config, &c, &err);
    if (rc != status) fprintf(stderr, "  %s: rc=%d (%s) err=%s\n", name, rc, na_status_str(rc), err ? err : "(null)");
    CHECK(rc == status, name);
    CHECK(c == NULL, "out_client is NULL after failure");
    CHECK(err != NULL, "error document set");
    if (err) {
        snprintf(want, sizeof want, "\"code\":\"%s\"", code);
        if (!strstr(err, want)) fprintf(stderr, "  %s: got %s\n", name, err);
        CHECK(strstr(err, want) != NULL, name);
        CHECK(strstr(err, "\"v\":1") != NULL, "error document carries v:1");
        CHECK(strstr(err, "\"message\":\"") != NULL, "error document has a message");
        if (field) {
            snprintf(want, sizeof want, "\"field\":\"%s\"", field);
            if (!strstr(err, want)) fprintf(stderr, "  %s: field missing in %s\n", name, err);
            CHECK(strstr(err, want) != NULL, name);
        }
    }
    na_string_free(err);
}

static int log_calls = 0;
static void on_log(int level, const char *message, const char *correlation_id, void *user) {
    (void)correlation_id;
    CHECK(level >= NA_LOG_ERROR && level <= NA_LOG_VERBOSE, "log level in range");
    CHECK(message != NULL && message[0] != '\0', "log message set");
    CHECK(user == (void *)&log_calls, "user data passed through");
    log_calls++;
}

struct shared { na_client *client; int ok; int invalid; int other; };

static void *hammer(void *arg) {
    struct shared *s = arg;
    int i;
    for (i = 0; i < 200; i++) {
        char *out = NULL;
        int rc = na_client_info(s->client, "{}", &out);
        if (rc == NA_OK) s->ok++;
        else if (rc == NA_EINVAL && out && strstr(out, "invalid_handle")) s->invalid++;
        else s->other++;
        na_string_free(out);
    }
    return NULL;
}

/* A file cache in MSAL's format, under valgrind: loaded, listed, signed out (a locked, atomic rewrite). */
static void file_cache(void) {
    char dir[] = "/tmp/nativeauth-abi-XXXXXX", path[256], config[512], *out = NULL;
    const char *doc =
        "{\"RefreshToken\":{\"u.t-127.0.0.1-refreshtoken-00001111-aaaa-2222-bbbb-3333cccc4444--\":"
        "{\"credential_type\":\"RefreshToken\",\"secret\":\"RT\",\"home_account_id\":\"u.t\","
        "\"environment\":\"127.0.0.1\",\"client_id\":\"00001111-aaaa-2222-bbbb-3333cccc4444\",\"target\":\"\"}},"
        "\"Account\":{\"u.t-127.0.0.1-t\":{\"home_account_id\":\"u.t\",\"environment\":\"127.0.0.1\","
        "\"realm\":\"t\",\"username\":\"ann@contoso.com\",\"authority_type\":\"MSSTS\"}},"
        "\"Other\":{\"k\":{\"kept\":[1,2,{\"x\":\"\\u00e9\"}]}}}";
    FILE *f;
    na_client *c = NULL;
    int rc;
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/cache.json", dir);
    f = fopen(path, "w");
    CHECK(f != NULL, "write the cache file");
    if (!f) return;
    fputs(doc, f);
    fclose(f);
    chmod(path, 0600);
    snprintf(config, sizeof config,
             "{\"authority\":\"http://127.0.0.1:9/contoso.onmicrosoft.com\",\"client_id\":"
             "\"00001111-aaaa-2222-bbbb-3333cccc4444\",\"cache\":{\"type\":\"file\",\"path\":\"%s\"}}",
             path);
    rc = na_client_new(config, &c, &out);
    CHECK(rc == NA_OK && c != NULL, "client over a file cache");
    na_string_free(out);
    rc = na_get_accounts(c, NULL, &out);
    CHECK(rc == NA_OK && out && strstr(out, "\"ann@contoso.com\"") != NULL, "the file's account is listed");
    na_string_free(out);
    rc = na_client_info(c, NULL, &out);
    CHECK(rc == NA_OK && out && strstr(out, "\"type\":\"file\"") != NULL, "info names the file cache");
    na_string_free(out);
    rc = na_sign_out(c, NULL, &out);
    CHECK(rc == NA_OK && out && strstr(out, "\"was_signed_in\":true") != NULL, "signed out into the file");
    na_string_free(out);
    na_client_free(c);
    f = fopen(path, "r");
    if (f) {
        char text[1024] = {0};
        size_t n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        CHECK(n > 0 && strstr(text, "\"RT\"") == NULL, "the refresh token left the file");
        CHECK(strstr(text, "\"kept\":[1,2,{\"x\":\"\\u00e9\"}]") != NULL, "what the library does not know is kept");
    }
    unlink(path);
    rmdir(dir);
}

/* A file cache holding a DPoP-bound sign-in (RFC 9449) under valgrind: its key (RFC 6979 A.2.5's P-256 key; its RFC
 * 7638 thumbprint is DOvx…Sm0) restored, its token served as DPoP, proofs made, bad requests refused, a token bound to
 * another key never served, and the key gone after sign-out. */
static void file_cache_dpop(void) {
    char dir[] = "/tmp/nativeauth-abi-XXXXXX", path[256], config[512], *out = NULL, text[4096] = {0};
    const char *jkt = "DOvxvJiAdIqVWIkFt5hDtCunXLF0BV4-JGv4f-ALSm0";
    const char *cid = "00001111-aaaa-2222-bbbb-3333cccc4444";
    FILE *f;
    na_client *c = NULL;
    int rc;
    size_t n;
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    snprintf(path, sizeof path, "%s/cache.json", dir);
    f = fopen(path, "w");
    CHECK(f != NULL, "write the cache file");
    if (!f) return;
    fprintf(f,
            "{\"NativeAuthDPoPRefreshToken\":{\"r\":{\"secret\":\"RT\",\"home_account_id\":\"s.h\","
            "\"environment\":\"127.0.0.1\",\"client_id\":\"%s\",\"key_id\":\"%s\",\"token_type\":\"DPoP\"}},"
            "\"NativeAuthDPoPKey\":{\"k\":{\"secret\":\"ya-p2EW6dRZrXCFXZ7HWk05Qw9s26JsSe4piKxIPZyE\","
            "\"home_account_id\":\"s.h\",\"environment\":\"127.0.0.1\",\"client_id\":\"%s\",\"key_id\":\"%s\"}},"
            "\"NativeAuthDPoPAccessToken\":{\"a\":{\"secret\":\"AT1\",\"home_account_id\":\"s.h\","
            "\"environment\":\"127.0.0.1\",\"client_id\":\"%s\",\"realm\":\"\",\"target\":\"read\","
            "\"key_id\":\"%s\",\"expires_on\":\"9999999999\",\"cached_at\":\"1\"},"
            "\"b\":{\"secret\":\"AT2\",\"home_account_id\":\"s.h\",\"environment\":\"127.0.0.1\","
            "\"client_id\":\"%s\",\"realm\":\"\",\"target\":\"write\",\"key_id\":\"another-key\","
            "\"expires_on\":\"9999999999\",\"cached_at\":\"1\"}}}",
            cid, jkt, cid, jkt, cid, jkt, cid);
    fclose(f);
    chmod(path, 0600);
    snprintf(config, sizeof config,
             "{\"authority\":\"http://127.0.0.1:9/oidc\",\"authority_type\":\"oidc\",\"client_id\":\"%s\","
             "\"dpop\":true,\"cache\":{\"type\":\"file\",\"path\":\"%s\"}}",
             cid, path);
    rc = na_client_new(config, &c, &out);
    CHECK(rc == NA_OK && c != NULL, "a DPoP client over a file cache");
    na_string_free(out);
    rc = na_get_access_token(c, "{\"scopes\":[\"read\"]}", &out);
    CHECK(rc == NA_OK && out && strstr(out, "\"AT1\"") && strstr(out, "\"token_type\":\"DPoP\""),
          "the DPoP token is served as DPoP");
    na_string_free(out);
    rc = na_get_access_token(c, "{\"scopes\":[\"write\"]}", &out);
    CHECK(rc != NA_OK && out && strstr(out, "AT2") == NULL, "a token bound to another key is never served");
    na_string_free(out);
    rc = na_dpop_proof(c, "{\"method\":\"GET\",\"url\":\"https://api.example/x?y=1\",\"access_token\":\"AT1\"}",
                       &out);
    CHECK(rc == NA_OK && out && strstr(out, "\"proof\":\"eyJ") != NULL, "a proof");
    na_string_free(out);
    rc = na_dpop_proof(c, "{\"method\":\"GET\",\"url\":\"ftp://x\"}", &out);
    CHECK(rc == NA_EINVAL && out && strstr(out, "\"field\":\"url\"") != NULL, "a proof for a bad URL is refused");
    na_string_free(out);
    CHECK(na_dpop_proof(c, NULL, &out) == NA_EINVAL && out != NULL, "NULL request");
    na_string_free(out);
    CHECK(na_dpop_proof(c, "{}", NULL) == NA_EINVAL, "NULL out_json");
    CHECK(na_dpop_proof(NULL, "{}", &out) == NA_EINVAL && out && strstr(out, "invalid_handle"), "NULL client");
    na_string_free(out);
    rc = na_sign_out(c, NULL, &out);
    CHECK(rc == NA_OK, "signed out");
    na_string_free(out);
    na_client_free(c);
    f = fopen(path, "r");
    if (f) {
        n = fread(text, 1, sizeof text - 1, f);
        fclose(f);
        CHECK(n > 0 && strstr(text, "ya-p2EW6") == NULL && strstr(text, "\"RT\"") == NULL,
              "the key and the refresh token left the file");
    }
    unlink(path);
    rmdir(dir);
}

int main(void) {
    char *out = NULL;
    char *big;
    na_client *c = NULL;
    int rc, i;
    const size_t BIG = 10u * 1024u * 1024u;

    /* versions and status strings */
    CHECK(na_abi_version() == NA_ABI_VERSION, "ABI version matches the header");
    CHECK(strcmp(na_version(), NA_VERSION_STRING) == 0, "version string matches the header");
    CHECK(strcmp(na_status_str(NA_OK), "success") == 0, "status string for NA_OK");
    for (i = NA_OK; i > NA__LAST; i--) CHECK(strcmp(na_status_str(i), "unknown status") != 0, "every status named");
    CHECK(strcmp(na_status_str(NA__LAST), "unknown status") == 0, "sentinel is unknown");
    CHECK(strcmp(na_status_str(12345), "unknown status") == 0, "unknown status");

    /* NULL-safety of the destructors */
    na_string_free(NULL);
    na_client_free(NULL);

    /* na_client_new: every kind of bad input */
    expect_new_error("NULL config", NULL, NA_EINVAL, "invalid_argument", NULL);
    expect_new_error("empty string", "", NA_EINVAL, "invalid_argument", NULL);
    expect_new_error("invalid JSON", "{\"authority\":", NA_EINVAL, "invalid_argument", NULL);
    expect_new_error("invalid UTF-8", "{\"authority\":\"\xff\xfe\",\"client_id\":\"x\"}", NA_EINVAL,
                     "invalid_argument", NULL);
    expect_new_error("top-level array", "[1,2]", NA_EINVAL, "invalid_argument", NULL);
    expect_new_error("wrong type", "{\"authority\":\"https://contoso.ciamlogin.com\",\"client_id\":42}", NA_EINVAL,
                     "invalid_argument", "client_id");
    expect_new_error("missing client_id", "{\"authority\":\"https://contoso.ciamlogin.com\"}", NA_EINVAL,
                     "invalid_argument", "client_id");
    expect_new_error("missing authority", "{\"client_id\":\"abc\"}", NA_EINVAL, "invalid_argument", "authority");
    expect_new_error("dpop with Entra", "{\"tenant_subdomain\":\"contoso\",\"client_id\":\"abc\",\"dpop\":true}",
                     NA_EINVAL, "dpop_unsupported", "dpop");
    expect_new_error("http to a non-loopback host",
                     "{\"authority\":\"http://contoso.ciamlogin.com/contoso.onmicrosoft.com\",\"client_id\":\"abc\"}",
                     NA_EINVAL, "invalid_argument", NULL);
    expect_new_error("bad challenge type",
                     "{\"tenant_subdomain\":\"contoso\",\"client_id\":\"abc\",\"challenge_types\":[\"sms\"]}",
                     NA_EINVAL, "invalid_argument", "challenge_types[0]");
    expect_new_error("timeout out of range",
                     "{\"tenant_subdomain\":\"contoso\",\"client_id\":\"abc\",\"connect_timeout_ms\":0}",
                     NA_EINVAL, "invalid_argument", "connect_timeout_ms");
    expect_new_error("unsupported version", "{\"v\":2,\"tenant_subdomain\":\"contoso\",\"client_id\":\"abc\"}",
                     NA_EINVAL,
                     "invalid_argument", "v");
    expect_new_error("missing CA file",
                     "{\"tenant_subdomain\":\"contoso\",\"client_id\":\"abc\",\"ca_bundle\":\"/nonexistent/ca.pem\"}",
                     NA_EINVAL, "invalid_argument", "ca_bundle");
    file_cache();
    file_cache_dpop();
    expect_new_error("file cache with a relative path",
                     "{\"tenant_subdomain\":\"contoso\",\"client_id\":\"abc\",\"cache\":{\"path\":\"x.json\"}}",
                     NA_EINVAL, "invalid_argument", "cache.path");
    /* /tmp is writable by everyone: a token cache there is refused. */
    expect_new_error("file cache in a shared directory",
                     "{\"tenant_subdomain\":\"contoso\",\"client_id\":\"abc\",\"cache\":{\"path\":\"/tmp/x.json\"}}",
                     NA_ESTORAGE, "cache_insecure", NULL);
    {
        char deep[20010];
        memset(deep, '[', 20000);
        deep[20000] = '\0';
        expect_new_error("deep nesting", deep, NA_EINVAL, "invalid_argument", NULL);
    }
    big = malloc(BIG + 1);
    CHECK(big != NULL, "malloc");
    if (big) {
        memset(big, 'a', BIG);
        big[0] = '"';
        big[BIG - 1] = '"';
        big[BIG] = '\0';
        expect_new_error("10 MB string", big, NA_EINVAL, "invalid_argument", NULL);
        free(big);
    }

    /* NULL out pointers */
    rc = na_client_new(GOOD, NULL, &out);
    CHECK(rc == NA_EINVAL, "NULL out_client refused");
    CHECK(out != NULL && strstr(out, "invalid_argument") != NULL, "with an error document");
    na_string_free(out);
    out = NULL;
    rc = na_client_new("{", &c, NULL); /* the error document is optional */
    CHECK(rc == NA_EINVAL && c == NULL, "NULL out_error allowed");

    /* a good client; the authority forms of */
    rc = na_client_new(GOOD, &c, &out);
    CHECK(rc == NA_OK && c != NULL && out == NULL, "client created");
    rc = na_client_info(c, NULL, &out);
    CHECK(rc == NA_OK, "info with NULL request");
    CHECK(out && strstr(out, "\"authority\":\"http://127.0.0.1:9/contoso.onmicrosoft.com\""), "authority kept");
    CHECK(out && strstr(out, "\"challenge_types\":[\"oob\",\"password\",\"redirect\"]"), "redirect always added");
    CHECK(out && strstr(out, "\"v\":1"), "result carries v:1");
    na_string_free(out);

    /* operations: bad request documents */
    rc = na_client_info(c, "not json", &out);
    CHECK(rc == NA_EINVAL && out && strstr(out, "invalid_argument"), "invalid request JSON");
    na_string_free(out);
    rc = na_client_info(c, "[]", &out);
    CHECK(rc == NA_EINVAL && out && strstr(out, "invalid_argument"), "request must be an object");
    na_string_free(out);
    rc = na_client_info(c, "{}", NULL);
    CHECK(rc == NA_EINVAL, "NULL out_json");
    rc = na_client_info(NULL, "{}", &out);
    CHECK(rc == NA_EINVAL && out && strstr(out, "invalid_handle"), "NULL handle");
    na_string_free(out);
    rc = na_client_info((na_client *)(void *)&rc, "{}", &out); /* a forged pointer is never dereferenced */
    CHECK(rc == NA_EINVAL && out && strstr(out, "invalid_handle"), "forged handle");
    na_string_free(out);

    /* logging */
    rc = na_client_set_log_callback(c, NA_LOG_VERBOSE, on_log, &log_calls);
    CHECK(rc == NA_OK, "log callback installed");
    rc = na_client_set_log_callback(c, 99, on_log, NULL);
    CHECK(rc == NA_EINVAL, "bad log level refused");
    rc = na_client_info(c, "{}", &out);
    na_string_free(out);
    CHECK(log_calls > 0, "log callback called");
    rc = na_client_set_log_callback(c, NA_LOG_OFF, NULL, NULL);
    CHECK(rc == NA_OK, "log callback removed");

    /* many threads on one client, freed while they run */
    {
        pthread_t t[4];
        struct shared s[4];
        for (i = 0; i < 4; i++) {
            s[i].client = c; s[i].ok = s[i].invalid = s[i].other = 0;
            pthread_create(&t[i], NULL, hammer, &s[i]);
        }
        na_client_free(c);
        for (i = 0; i < 4; i++) {
            pthread_join(t[i], NULL);
            CHECK(s[i].other == 0, "calls racing a free answer OK or invalid_handle only");
            CHECK(s[i].ok + s[i].invalid == 200, "every call answered");
        }
    }

    /* a destroyed handle */
    rc = na_client_info(c, "{}", &out);
    CHECK(rc == NA_EINVAL && out && strstr(out, "invalid_handle"), "freed handle detected");
    na_string_free(out);
    CHECK(na_client_set_log_callback(c, NA_LOG_INFO, on_log, NULL) == NA_EINVAL, "freed handle: set_log_callback");
    na_client_free(c); /* double free is ignored */

    /* tenant_subdomain and the ciamlogin rewrite */
    rc = na_client_new("{\"tenant_subdomain\":\"contoso\",\"client_id\":\"abc\"}", &c, NULL);
    CHECK(rc == NA_OK, "tenant_subdomain accepted");
    rc = na_client_info(c, "{\"v\":1}", &out);
    CHECK(out && strstr(out, "\"authority\":\"https://contoso.ciamlogin.com/contoso.onmicrosoft.com\""),
          "subdomain expanded");
    na_string_free(out);
    na_client_free(c);
    rc = na_client_new("{\"authority\":\"HTTPS://Contoso.CIAMlogin.com/\",\"client_id\":\"abc\"}", &c, NULL);
    CHECK(rc == NA_OK, "bare ciamlogin authority accepted");
    rc = na_client_info(c, "{}", &out);
    CHECK(out && strstr(out, "\"authority\":\"https://contoso.ciamlogin.com/contoso.onmicrosoft.com\""),
          "ciamlogin rewrite");
    na_string_free(out);
    na_client_free(c);

    /* every operation: NULL request, invalid UTF-8, a destroyed handle */
    {
        typedef int (*op_fn)(na_client *, const char *, char **);
        op_fn ops[] = {na_sign_in, na_sign_up, na_reset_password, na_flow_submit, na_get_access_token, na_call_api};
        size_t k;
        rc = na_client_new(GOOD, &c, NULL);
        CHECK(rc == NA_OK, "client for the operation checks");
        for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            rc = ops[k](c, NULL, &out);
            CHECK(rc == NA_EINVAL && out && strstr(out, "invalid_argument"), "NULL request refused");
            na_string_free(out);
            rc = ops[k](c, "{\"username\":\"\xc3\x28\",\"flow\":\"\xff\"}", &out);
            CHECK(rc == NA_EINVAL && out && strstr(out, "invalid_argument"), "invalid UTF-8 refused");
            na_string_free(out);
            rc = ops[k](c, "{}", NULL);
            CHECK(rc == NA_EINVAL, "NULL out_json refused");
        }
        rc = na_get_account(c, NULL, &out);
        CHECK(rc == NA_ENOTFOUND && out && strstr(out, "no_account"), "no account yet");
        na_string_free(out);
        rc = na_sign_out(c, NULL, &out);
        CHECK(rc == NA_OK && out && strstr(out, "signed_out"), "sign-out is idempotent");
        na_string_free(out);
        na_client_free(c);
        for (k = 0; k < sizeof ops / sizeof ops[0]; k++) {
            rc = ops[k](c, "{\"username\":\"a@b.c\"}", &out);
            CHECK(rc == NA_EINVAL && out && strstr(out, "invalid_handle"), "destroyed handle detected");
            na_string_free(out);
        }
    }

    /* na_parse_www_authenticate: no client; Microsoft Graph's claims challenge, then bad input of every kind */
    rc = na_parse_www_authenticate(
        "Bearer realm=\"\", authorization_uri=\"https://login.microsoftonline.com/common/oauth2/authorize\", "
        "client_id=\"00000003-0000-0000-c000-000000000000\", error=\"insufficient_claims\", "
        "claims=\"eyJhY2Nlc3NfdG9rZW4iOnsibmJmIjp7ImVzc2VudGlhbCI6dHJ1ZSwgInZhbHVlIjoiMTYwNDEwNjY1MSJ9fX0=\"",
        &out);
    CHECK(rc == NA_OK && out, "a claims challenge parses");
    CHECK(out && strstr(out, "\"claims\":\"{\\\"access_token\\\":{\\\"nbf\\\"") != NULL, "its claims decoded");
    CHECK(out && strstr(out, "\"scheme\":\"Bearer\"") != NULL, "its scheme");
    na_string_free(out);
    rc = na_parse_www_authenticate(NULL, &out);
    CHECK(rc == NA_EINVAL && out && strstr(out, "invalid_argument"), "NULL header refused");
    na_string_free(out);
    rc = na_parse_www_authenticate("Bearer", NULL);
    CHECK(rc == NA_EINVAL, "NULL out_json refused");
    rc = na_parse_www_authenticate("Basic realm=\"\xff\"", &out);
    CHECK(rc == NA_EINVAL && out && strstr(out, "invalid_argument"), "invalid UTF-8 refused");
    na_string_free(out);
    rc = na_parse_www_authenticate("Bearer error=\"insufficient_claims", &out);
    CHECK(rc == NA_EINVAL && out && strstr(out, "invalid_argument") && !strstr(out, "insufficient"),
          "unterminated quoted string refused, not quoted");
    na_string_free(out);
    big = malloc(BIG + 1);
    CHECK(big != NULL, "malloc");
    if (big) {
        memset(big, ',', BIG);
        big[BIG] = '\0';
        rc = na_parse_www_authenticate(big, &out);
        CHECK(rc == NA_EINVAL && out && strstr(out, "larger than 65536"), "10 MB header refused");
        na_string_free(out);
        big[65536] = '\0';
        rc = na_parse_www_authenticate(big, &out);
        CHECK(rc == NA_OK && out && strcmp(out, "{\"challenges\":[],\"v\":1}") == 0, "64 KiB of commas: none");
        na_string_free(out);
        free(big);
    }

    started_calls();
    started_reentrant();

    printf("%d passed, %d failed\n", checks - failures, failures);
    return failures == 0 ? 0 : 1;
}
