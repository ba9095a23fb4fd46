#define _GNU_SOURCE
#include "natls.h"
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

/* ---- certificates ---- */

static EVP_PKEY *make_key(void) {
    EVP_PKEY *key = NULL;
    EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_id(EVP_PKEY_RSA, NULL);
    if (!ctx) return NULL;
    if (EVP_PKEY_keygen_init(ctx) != 1 || EVP_PKEY_CTX_set_rsa_keygen_bits(ctx, 2048) != 1 ||
        EVP_PKEY_keygen(ctx, &key) != 1)
        key = NULL;
    EVP_PKEY_CTX_free(ctx);
    return key;
}

static int add_ext(X509 *cert, X509 *issuer, int nid, const char *value) {
    X509V3_CTX ctx;
    X509_EXTENSION *ext;
    X509V3_set_ctx_nodb(&ctx);
    X509V3_set_ctx(&ctx, issuer, cert, NULL, NULL, 0);
    ext = X509V3_EXT_conf_nid(NULL, &ctx, nid, value);
    if (!ext) return -1;
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
    return 0;
}

static X509 *make_cert(EVP_PKEY *key, EVP_PKEY *signer, X509 *issuer, const char *cn, int is_ca, int days,
                       const char *san) {
    X509 *cert = X509_new();
    unsigned char serial[16];
    BIGNUM *bn;
    X509_NAME *name;
    if (!cert) return NULL;
    X509_set_version(cert, 2);
    if (RAND_bytes(serial, sizeof serial) != 1) goto fail;
    serial[0] &= 0x7f;
    bn = BN_bin2bn(serial, sizeof serial, NULL);
    if (!bn) goto fail;
    BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert));
    BN_free(bn);
    X509_gmtime_adj(X509_getm_notBefore(cert), -3600);
    X509_gmtime_adj(X509_getm_notAfter(cert), (long)days * 86400L);
    X509_set_pubkey(cert, key);
    name = X509_get_subject_name(cert);
    X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, (const unsigned char *)"NativeAuth emulator", -1, -1, 0);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)cn, -1, -1, 0);
    X509_set_issuer_name(cert, issuer ? X509_get_subject_name(issuer) : name);
    if (is_ca) {
        if (add_ext(cert, issuer ? issuer : cert, NID_basic_constraints, "critical,CA:TRUE,pathlen:0") ||
            add_ext(cert, issuer ? issuer : cert, NID_key_usage, "critical,keyCertSign,cRLSign") ||
            add_ext(cert, issuer ? issuer : cert, NID_subject_key_identifier, "hash"))
            goto fail;
    } else {
        if (add_ext(cert, issuer, NID_basic_constraints, "critical,CA:FALSE") ||
            add_ext(cert, issuer, NID_key_usage, "critical,digitalSignature,keyEncipherment") ||
            add_ext(cert, issuer, NID_ext_key_usage, "serverAuth") ||
            add_ext(cert, issuer, NID_subject_alt_name, san) ||
            add_ext(cert, issuer, NID_authority_key_identifier, "keyid:always"))
            goto fail;
    }
    if (X509_sign(cert, signer, EVP_sha256()) == 0) goto fail;
    return cert;
fail:
    X509_free(cert);
    return NULL;
}

/* Writes one PEM file. A file of that name is replaced, never written through: it is unlinked (a symbolic link
 * planted there goes, not what it points to) and created anew with O_EXCL|O_NOFOLLOW, so the private key is 0600 from
 * its first byte (0644 for certificates). */
static int write_pem(const char *dir, const char *file, X509 *cert, EVP_PKEY *key) {
    char path[4096];
    FILE *f;
    int ok, fd;
    if (snprintf(path, sizeof path, "%s/%s", dir, file) >= (int)sizeof path) return -1;
    if (unlink(path) != 0 && errno != ENOENT) return -1;
    fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, key ? 0600 : 0644);
    if (fd < 0) return -1;
    f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        return -1;
    }
    if (key) {
        ok = PEM_write_PrivateKey(f, key, NULL, NULL, 0, NULL, NULL);
    } else {
        ok = PEM_write_X509(f, cert);
    }
    fclose(f);
    return ok == 1 ? 0 : -1;
}

int natls_write_ca_and_server_cert(const char *dir, int valid_days, const char *extra_dns_name) {
    int rc = -1;
    EVP_PKEY *ca_key = make_key(), *srv_key = make_key();
    X509 *ca = NULL, *srv = NULL;
    char san[512];
    const char *p;
    if (extra_dns_name) {
        /* A host name only (letters, digits, '-', '.'): nothing that could add to the extension's syntax. */
        if (!*extra_dns_name || strlen(extra_dns_name) > 253) goto out;
        for (p = extra_dns_name; *p; p++)
            if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
                  *p == '.'))
                goto out;
    }
    snprintf(san, sizeof san, "IP:127.0.0.1,DNS:localhost,IP:::1%s%s", extra_dns_name ? ",DNS:" : "",
             extra_dns_name ? extra_dns_name : "");
    if (!ca_key || !srv_key) goto out;
    ca = make_cert(ca_key, ca_key, NULL, "NativeAuth emulator local CA", 1, valid_days, NULL);
    if (!ca) goto out;
    srv = make_cert(srv_key, ca_key, ca, "127.0.0.1", 0, valid_days, san);
    if (!srv) goto out;
    if (write_pem(dir, "ca.pem", ca, NULL) || write_pem(dir, "server.pem", srv, NULL) ||
        write_pem(dir, "server-key.pem", NULL, srv_key))
        goto out;
    rc = 0;
out:
    X509_free(ca);
    X509_free(srv);
    EVP_PKEY_free(ca_key);
    EVP_PKEY_free(srv_key);
    ERR_clear_error();
    return rc;
}

/* ---- the TLS terminator ---- */

struct natls_proxy {
    int listen_fd;
    uint16_t port;
    uint16_t backend_port;
    SSL_CTX *ctx;
    pthread_t acceptor;
    atomic_int stopping;
    atomic_int active;
};

struct conn { natls_proxy *proxy; int fd; };

static void *serve_conn(void *arg) {
    struct conn *c = arg;
    natls_proxy *p = c->proxy;
    int fd = c->fd, be = -1, reset = 0;
    SSL *ssl = NULL;
    char buf[16384];
    struct sockaddr_in addr;
    free(c);

    ssl = SSL_new(p->ctx);
    if (!ssl) goto done;
    SSL_set_fd(ssl, fd);
    {   /* bounded handshake */
        struct timeval tv = {10, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    if (SSL_accept(ssl) != 1) goto done;
    {
        struct timeval tv = {0, 0};
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    }
    be = socket(AF_INET, SOCK_STREAM, 0);
    if (be < 0) goto done;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(p->backend_port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(be, (struct sockaddr *)&addr, sizeof addr) != 0) goto done;
    {
        int one = 1;
        setsockopt(be, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    while (!atomic_load(&p->stopping)) {
        struct pollfd fds[2];
        int n;
        /* Data already decrypted inside OpenSSL does not show up in poll(). */
        if (SSL_pending(ssl) <= 0) {
            fds[0].fd = fd; fds[0].events = POLLIN; fds[0].revents = 0;
            fds[1].fd = be; fds[1].events = POLLIN; fds[1].revents = 0;
            n = poll(fds, 2, 200);
            if (n < 0 && errno != EINTR) break;
            if (n <= 0) continue;
        } else {
            fds[0].revents = POLLIN;
            fds[1].revents = 0;
        }
        if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
            int r = SSL_read(ssl, buf, sizeof buf);
            if (r <= 0) {
                int e = SSL_get_error(ssl, r);
                if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE) continue;
                break;
            }
            if (send(be, buf, (size_t)r, MSG_NOSIGNAL) != r) break;
        }
        if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
            ssize_t r = recv(be, buf, sizeof buf, 0);
            if (r < 0 && errno == ECONNRESET) reset = 1;  /* the backend reset: pass the reset on */
            if (r <= 0) break;
            if (SSL_write(ssl, buf, (int)r) != (int)r) break;
        }
    }
done:
    if (reset) {  /* no close_notify; SO_LINGER 0 makes close() send a TCP RST */
        struct linger l = {1, 0};
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    } else if (ssl) {
        SSL_shutdown(ssl);
    }
    if (ssl) SSL_free(ssl);
    if (be >= 0) close(be);
    close(fd);
    ERR_clear_error();
    atomic_fetch_sub(&p->active, 1);
    return NULL;
}

static void *accept_loop(void *arg) {
    natls_proxy *p = arg;
    while (!atomic_load(&p->stopping)) {
        struct pollfd pfd = {p->listen_fd, POLLIN, 0};
        int fd;
        pthread_t t;
        pthread_attr_t attr;
        struct conn *c;
        if (poll(&pfd, 1, 100) <= 0) continue;
        fd = accept(p->listen_fd, NULL, NULL);
        if (fd < 0) continue;
        c = malloc(sizeof *c);
        if (!c) { close(fd); continue; }
        c->proxy = p;
        c->fd = fd;
        atomic_fetch_add(&p->active, 1);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&t, &attr, serve_conn, c) != 0) {
            atomic_fetch_sub(&p->active, 1);
            close(fd);
            free(c);
        }
        pthread_attr_destroy(&attr);
    }
    return NULL;
}

natls_proxy *natls_proxy_start(uint16_t port, uint16_t backend_port, const char *cert_pem, const char *key_pem) {
    natls_proxy *p = calloc(1, sizeof *p);
    struct sockaddr_in addr;
    socklen_t len = sizeof addr;
    int one = 1;
    if (!p) return NULL;
    p->listen_fd = -1;
    p->backend_port = backend_port;
    p->ctx = SSL_CTX_new(TLS_server_method());
    if (!p->ctx) goto fail;
    SSL_CTX_set_min_proto_version(p->ctx, TLS1_2_VERSION);
    if (SSL_CTX_use_certificate_chain_file(p->ctx, cert_pem) != 1 ||
        SSL_CTX_use_PrivateKey_file(p->ctx, key_pem, SSL_FILETYPE_PEM) != 1)
        goto fail;
    p->listen_fd = socket(AF_INET, SOCK_STREAM, 0);
    if (p->listen_fd < 0) goto fail;
    setsockopt(p->listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(p->listen_fd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(p->listen_fd, 128) != 0) goto fail;
    if (getsockname(p->listen_fd, (struct sockaddr *)&addr, &len) != 0) goto fail;
    p->port = ntohs(addr.sin_port);
    if (pthread_create(&p->acceptor, NULL, accept_loop, p) != 0) goto fail;
    return p;
fail:
    if (p->listen_fd >= 0) close(p->listen_fd);
    if (p->ctx) SSL_CTX_free(p->ctx);
    free(p);
    ERR_clear_error();
    return NULL;
}

uint16_t natls_proxy_port(const natls_proxy *p) { return p ? p->port : 0; }

void natls_proxy_stop(natls_proxy *p) {
    int i;
    if (!p) return;
    atomic_store(&p->stopping, 1);
    pthread_join(p->acceptor, NULL);
    close(p->listen_fd);
    /* connection threads notice `stopping` within one poll interval */
    for (i = 0; i < 100 && atomic_load(&p->active) > 0; i++) usleep(20000);
    if (atomic_load(&p->active) == 0) {
        SSL_CTX_free(p->ctx);
        free(p);
    }
    /* else: leak the small struct rather than free it under a live thread */
}
