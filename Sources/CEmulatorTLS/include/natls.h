/* CEmulatorTLS: the emulator's --tls mode (never linked into libnativeauth.so).
 *  - natls_write_ca_and_server_cert: a fresh self-signed CA and a server certificate for 127.0.0.1 / localhost /
 *    ::1 signed by it, written as PEM files;
 *  - natls_proxy_*: a TLS terminator on 127.0.0.1 that forwards each connection to a plain-HTTP backend port. */
#ifndef NATLS_H
#define NATLS_H
#include <stdint.h>

/* Writes ca.pem, server.pem and server-key.pem into dir (which must exist); the server certificate also names
 * extra_dns_name (a host name; NULL: none). Returns 0 or -1. */
int natls_write_ca_and_server_cert(const char *dir, int valid_days, const char *extra_dns_name);

typedef struct natls_proxy natls_proxy;

/* Listens on 127.0.0.1:port (0 = ephemeral) with the given certificate chain and key and forwards every accepted
 * connection to 127.0.0.1:backend_port. Returns NULL on failure. */
natls_proxy *natls_proxy_start(uint16_t port, uint16_t backend_port, const char *cert_pem, const char *key_pem);
uint16_t natls_proxy_port(const natls_proxy *p);
/* Stops accepting, ends all connections and frees the proxy. */
void natls_proxy_stop(natls_proxy *p);

#endif
