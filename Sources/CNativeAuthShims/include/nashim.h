/* CNativeAuthShims: the few things Swift cannot call directly.
 *  - libcurl's variadic curl_easy_setopt / curl_easy_getinfo, as typed, non-variadic wrappers;
 *  - jansson and OpenSSL function-like macros;
 *  - a static "out of memory" document the C ABI can hand out when malloc fails.
 * Every symbol is prefixed nashim_ and none of them is exported from libnativeauth.so (version script). */
#ifndef NASHIM_H
#define NASHIM_H

#include <stddef.h>
#include <stdint.h>
#include <curl/curl.h>
#include <jansson.h>
#include <openssl/evp.h>

/* ---- libcurl ---- */
typedef size_t (*nashim_data_cb)(char *ptr, size_t size, size_t nmemb, void *userdata);

CURLcode nashim_curl_setopt_long(CURL *h, CURLoption opt, long value);
CURLcode nashim_curl_setopt_off(CURL *h, CURLoption opt, curl_off_t value);
CURLcode nashim_curl_setopt_ptr(CURL *h, CURLoption opt, void *value);
CURLcode nashim_curl_setopt_str(CURL *h, CURLoption opt, const char *value);
CURLcode nashim_curl_setopt_slist(CURL *h, CURLoption opt, struct curl_slist *value);
CURLcode nashim_curl_setopt_datacb(CURL *h, CURLoption opt, nashim_data_cb cb);
CURLcode nashim_curl_getinfo_long(CURL *h, CURLINFO info, long *value);
CURLcode nashim_curl_getinfo_off(CURL *h, CURLINFO info, curl_off_t *value);

/* ---- jansson ---- */
json_type nashim_json_typeof(const json_t *j);
int nashim_json_is_true(const json_t *j);
void nashim_json_decref(json_t *j);

/* ---- OpenSSL ---- */
int nashim_evp_pkey_public_key_selection(void);
int nashim_evp_pkey_rsa_id(void);

/* ---- memory ---- */
/* A static, never-freed error document for the case where the library cannot allocate one. */
char *nashim_oom_document(void);
/* Overwrites n bytes with zeros in a way the compiler may not elide. */
void nashim_wipe(void *p, size_t n);

#endif
