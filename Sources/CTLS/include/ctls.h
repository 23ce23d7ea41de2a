// A small TLS client over Mbed TLS for the monitor's MQTT (docs/monitoring.md): non-blocking, on
// a socket the caller owns and polls. Mbed TLS 2.28 (Debian bookworm) and 3.6 (trixie) differ in
// a few calls; shim.c hides that. No I/O but the socket's send/recv and the files named here.
#ifndef CTLS_H
#define CTLS_H
#include <stddef.h>

typedef struct ctls_config ctls_config;
typedef struct ctls_session ctls_session;

// Results of ctls_handshake, ctls_read and ctls_write (read/write return a count >= 0 otherwise).
enum {
    CTLS_WANT_READ = -1,   // call again once the socket is readable
    CTLS_WANT_WRITE = -2,  // call again once the socket is writable
    CTLS_FAILED = -3,      // err says why; the session is unusable
    CTLS_CLOSED = -4,      // the peer closed (close_notify, end of stream, or reset)
    CTLS_ALERT = -5,       // the peer sent a fatal alert (with TLS 1.3, a refused client
                           // certificate arrives so, after the client's handshake is done)
};

// The trust anchors (PEM file; required), and an optional client certificate (a file) and its
// key (the bytes of its PEM or DER file, read by the caller after judging the file's owner and
// mode; key_name names it in messages): both or neither. NULL with a message in err when a file
// cannot be read or parsed, or the key does not belong to the certificate.
ctls_config *ctls_config_new(const char *ca_file, const char *cert_file, const unsigned char *key,
                             size_t key_len, const char *key_name, char *err, size_t errlen);
void ctls_config_free(ctls_config *config);

// A client session on the connected socket fd, checking the server's certificate against
// server_name (also sent as SNI). The config must outlive it. NULL with a message in err.
ctls_session *ctls_session_new(ctls_config *config, int fd, const char *server_name, char *err, size_t errlen);
// Does not close fd.
void ctls_session_free(ctls_session *session);

// 0 once the handshake is done and the server's certificate verified.
int ctls_handshake(ctls_session *session, char *err, size_t errlen);
long ctls_read(ctls_session *session, unsigned char *buf, size_t len, char *err, size_t errlen);
long ctls_write(ctls_session *session, const unsigned char *buf, size_t len, char *err, size_t errlen);
// Decrypted bytes waiting inside the session (poll cannot see them).
size_t ctls_pending(ctls_session *session);
// Sends close_notify, best effort (never blocks).
void ctls_close_notify(ctls_session *session);
// The protocol and cipher suite agreed, e.g. "TLSv1.2 TLS-ECDHE-RSA-WITH-AES-256-GCM-SHA384".
void ctls_describe(ctls_session *session, char *out, size_t outlen);
// "Mbed TLS 2.28.3"
const char *ctls_library(void);

#endif
