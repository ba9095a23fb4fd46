/* COpenSSL: libcrypto, plus typed wrappers for its function-like macros. */
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <openssl/bn.h>
#include <openssl/rsa.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/obj_mac.h>
#include <openssl/param_build.h>
#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/crypto.h>

static inline int copenssl_pkey_public_key_selection(void) { return EVP_PKEY_PUBLIC_KEY; }
static inline int copenssl_pkey_keypair_selection(void) { return EVP_PKEY_KEYPAIR; }
static inline int copenssl_pkey_rsa_id(void) { return EVP_PKEY_RSA; }
static inline int copenssl_nid_p256(void) { return NID_X9_62_prime256v1; }
static inline void copenssl_free(void *p) { OPENSSL_free(p); }
/* Overwrites n bytes with zeros in a way the compiler may not elide. */
static inline void copenssl_cleanse(void *p, size_t n) { if (p && n) OPENSSL_cleanse(p, n); }
