#include "nashim.h"
#include <string.h>
#include <openssl/crypto.h>

CURLcode nashim_curl_setopt_long(CURL *h, CURLoption opt, long value) { return curl_easy_setopt(h, opt, value); }
CURLcode nashim_curl_setopt_off(CURL *h, CURLoption opt, curl_off_t value) { return curl_easy_setopt(h, opt, value); }
CURLcode nashim_curl_setopt_ptr(CURL *h, CURLoption opt, void *value) { return curl_easy_setopt(h, opt, value); }
CURLcode nashim_curl_setopt_str(CURL *h, CURLoption opt, const char *value) { return curl_easy_setopt(h, opt, value); }
CURLcode nashim_curl_setopt_slist(CURL *h, CURLoption opt, struct curl_slist *value) { return curl_easy_setopt(h, opt, value); }
CURLcode nashim_curl_setopt_datacb(CURL *h, CURLoption opt, nashim_data_cb cb) { return curl_easy_setopt(h, opt, cb); }
CURLcode nashim_curl_getinfo_long(CURL *h, CURLINFO info, long *value) { return curl_easy_getinfo(h, info, value); }
CURLcode nashim_curl_getinfo_off(CURL *h, CURLINFO info, curl_off_t *value) { return curl_easy_getinfo(h, info, value); }

json_type nashim_json_typeof(const json_t *j) { return json_typeof(j); }
int nashim_json_is_true(const json_t *j) { return json_is_true(j); }
void nashim_json_decref(json_t *j) { json_decref(j); }

int nashim_evp_pkey_public_key_selection(void) { return EVP_PKEY_PUBLIC_KEY; }
int nashim_evp_pkey_rsa_id(void) { return EVP_PKEY_RSA; }

static char oom_document[] =
    "{\"v\":1,\"error\":{\"code\":\"out_of_memory\",\"message\":\"The library could not allocate memory.\"}}";
char *nashim_oom_document(void) { return oom_document; }

void nashim_wipe(void *p, size_t n) { if (p && n) OPENSSL_cleanse(p, n); }
