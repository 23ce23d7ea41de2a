// Mbed TLS 2.28 (bookworm) and 3.6 (trixie) behind ctls.h: the differences are a few signatures
// and PSA's start-up call, chosen here by MBEDTLS_VERSION_MAJOR.
#include "ctls.h"

#define _GNU_SOURCE  // memmem
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/pk.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>
#if MBEDTLS_VERSION_MAJOR >= 3
#include <psa/crypto.h>
#endif

struct ctls_config {
    mbedtls_ssl_config ssl;
    mbedtls_x509_crt ca;
    mbedtls_x509_crt cert;
    mbedtls_pk_context key;
    mbedtls_entropy_context entropy;
    mbedtls_ctr_drbg_context drbg;
};

struct ctls_session {
    mbedtls_ssl_context ssl;
    int fd;
    int io_errno;  // the socket's errno when send/recv failed
};

static void say(char *err, size_t errlen, const char *fmt, const char *a, int ret) {
    if (!err || errlen == 0) return;
    char why[160] = "";
    if (ret) {
        mbedtls_strerror(ret, why, sizeof why);
    }
    snprintf(err, errlen, fmt, a ? a : "", why);
}

ctls_config *ctls_config_new(const char *ca_file, const char *cert_file, const unsigned char *key,
                             size_t key_len, const char *key_name, char *err, size_t errlen) {
    ctls_config *c = calloc(1, sizeof *c);
    if (!c) { say(err, errlen, "out of memory%s%s", NULL, 0); return NULL; }
    mbedtls_ssl_config_init(&c->ssl);
    mbedtls_x509_crt_init(&c->ca);
    mbedtls_x509_crt_init(&c->cert);
    mbedtls_pk_init(&c->key);
    mbedtls_entropy_init(&c->entropy);
    mbedtls_ctr_drbg_init(&c->drbg);
    int ret;
#if MBEDTLS_VERSION_MAJOR >= 3
    if (psa_crypto_init() != PSA_SUCCESS) { say(err, errlen, "cannot start PSA crypto%s%s", NULL, 0); goto fail; }
#endif
    static const unsigned char personal[] = "altbeacond mqtt";
    if ((ret = mbedtls_ctr_drbg_seed(&c->drbg, mbedtls_entropy_func, &c->entropy, personal, sizeof personal - 1)) != 0) {
        say(err, errlen, "cannot seed the random generator%s: %s", NULL, ret); goto fail;
    }
    if ((ret = mbedtls_x509_crt_parse_file(&c->ca, ca_file)) != 0) {
        if (ret < 0) { say(err, errlen, "cannot use the CA file %s: %s", ca_file, ret); goto fail; }
        // > 0: that many certificates in the file did not parse (the others did). Refused too: a
        // trust anchor the file was meant to give would be missing without a word, and the
        // broker refused later as "not trusted", far from the cause.
        if (err && errlen) {
            snprintf(err, errlen, "cannot use the CA file %s: %d of its certificates %s not parse (fix or remove %s)",
                     ca_file, ret, ret == 1 ? "does" : "do", ret == 1 ? "it" : "them");
        }
        goto fail;
    }
    if (cert_file && key) {
        if ((ret = mbedtls_x509_crt_parse_file(&c->cert, cert_file)) != 0) {
            say(err, errlen, "cannot use the client certificate %s: %s", cert_file, ret < 0 ? ret : MBEDTLS_ERR_X509_INVALID_FORMAT);
            goto fail;
        }
        // PEM is parsed with its terminating NUL counted, DER without
        unsigned char *copy = malloc(key_len + 1);
        if (!copy) { say(err, errlen, "out of memory%s%s", NULL, 0); goto fail; }
        memcpy(copy, key, key_len);
        copy[key_len] = 0;
        size_t len = key_len + (memmem(key, key_len, "-----BEGIN", 10) ? 1 : 0);
#if MBEDTLS_VERSION_MAJOR >= 3
        ret = mbedtls_pk_parse_key(&c->key, copy, len, NULL, 0, mbedtls_ctr_drbg_random, &c->drbg);
#else
        ret = mbedtls_pk_parse_key(&c->key, copy, len, NULL, 0);
#endif
        mbedtls_platform_zeroize(copy, key_len + 1);
        free(copy);
        if (ret != 0) { say(err, errlen, "cannot use the client key %s: %s", key_name, ret); goto fail; }
#if MBEDTLS_VERSION_MAJOR >= 3
        ret = mbedtls_pk_check_pair(&c->cert.pk, &c->key, mbedtls_ctr_drbg_random, &c->drbg);
#else
        ret = mbedtls_pk_check_pair(&c->cert.pk, &c->key);
#endif
        if (ret != 0) { say(err, errlen, "the client key %s does not belong to the client certificate%s", key_name, 0); goto fail; }
    }
    if ((ret = mbedtls_ssl_config_defaults(&c->ssl, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                           MBEDTLS_SSL_PRESET_DEFAULT)) != 0) {
        say(err, errlen, "cannot set up TLS%s: %s", NULL, ret); goto fail;
    }
    // TLS 1.2 at least (mosquitto's default too); the certificate chain must verify.
#if MBEDTLS_VERSION_MAJOR >= 3
    mbedtls_ssl_conf_min_tls_version(&c->ssl, MBEDTLS_SSL_VERSION_TLS1_2);
#else
    mbedtls_ssl_conf_min_version(&c->ssl, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
#endif
    mbedtls_ssl_conf_authmode(&c->ssl, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_ca_chain(&c->ssl, &c->ca, NULL);
    mbedtls_ssl_conf_rng(&c->ssl, mbedtls_ctr_drbg_random, &c->drbg);
    if (cert_file && key && (ret = mbedtls_ssl_conf_own_cert(&c->ssl, &c->cert, &c->key)) != 0) {
        say(err, errlen, "cannot use the client certificate %s: %s", cert_file, ret); goto fail;
    }
    return c;
fail:
    ctls_config_free(c);
    return NULL;
}

void ctls_config_free(ctls_config *c) {
    if (!c) return;
    mbedtls_ssl_config_free(&c->ssl);
    mbedtls_x509_crt_free(&c->ca);
    mbedtls_x509_crt_free(&c->cert);
    mbedtls_pk_free(&c->key);
    mbedtls_ctr_drbg_free(&c->drbg);
    mbedtls_entropy_free(&c->entropy);
    free(c);
}

// The socket as Mbed TLS's transport: non-blocking, EINTR retried, no SIGPIPE. Not Mbed TLS's
// own mbedtls_net_send/recv: they write() (a closed peer raises SIGPIPE in a process that has
// not ignored it), turn EINTR into WANT_READ/WANT_WRITE (a wakeup for nothing) and keep no errno
// (the log could only say "send failed", where these keep it for ctls_session_error).
static int bio_send(void *ctx, const unsigned char *buf, size_t len) {
    ctls_session *s = ctx;
    for (;;) {
        ssize_t n = send(s->fd, buf, len, MSG_NOSIGNAL);
        if (n >= 0) return (int)n;
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return MBEDTLS_ERR_SSL_WANT_WRITE;
        s->io_errno = errno;
        return MBEDTLS_ERR_NET_SEND_FAILED;
    }
}

static int bio_recv(void *ctx, unsigned char *buf, size_t len) {
    ctls_session *s = ctx;
    for (;;) {
        ssize_t n = recv(s->fd, buf, len, 0);
        if (n >= 0) return (int)n;  // 0: end of stream, which Mbed TLS reports as such
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return MBEDTLS_ERR_SSL_WANT_READ;
        s->io_errno = errno;
        return MBEDTLS_ERR_NET_RECV_FAILED;
    }
}

ctls_session *ctls_session_new(ctls_config *config, int fd, const char *server_name, char *err, size_t errlen) {
    ctls_session *s = calloc(1, sizeof *s);
    if (!s) { say(err, errlen, "out of memory%s%s", NULL, 0); return NULL; }
    s->fd = fd;
    mbedtls_ssl_init(&s->ssl);
    int ret;
    if ((ret = mbedtls_ssl_setup(&s->ssl, &config->ssl)) != 0 ||
        (ret = mbedtls_ssl_set_hostname(&s->ssl, server_name)) != 0) {
        say(err, errlen, "cannot start TLS%s: %s", NULL, ret);
        ctls_session_free(s);
        return NULL;
    }
    mbedtls_ssl_set_bio(&s->ssl, s, bio_send, bio_recv, NULL);
    return s;
}

void ctls_session_free(ctls_session *s) {
    if (!s) return;
    mbedtls_ssl_free(&s->ssl);
    free(s);
}

// One line from Mbed TLS's list of verification failures ("The certificate validity has
// expired\n..."): lower-case, joined by "; ".
static void verify_failure(ctls_session *s, char *err, size_t errlen) {
    char info[512] = "", joined[512];
    mbedtls_x509_crt_verify_info(info, sizeof info, "", mbedtls_ssl_get_verify_result(&s->ssl));
    size_t o = 0;
    for (const char *p = info; *p && o + 3 < sizeof joined; p++) {
        if (*p != '\n') joined[o++] = *p;
        else if (p[1]) joined[o++] = ';', joined[o++] = ' ';
    }
    joined[o] = 0;
    if (joined[0] >= 'A' && joined[0] <= 'Z') joined[0] = (char)(joined[0] - 'A' + 'a');
    int n = snprintf(err, errlen, "the broker's certificate is not trusted: %s", o ? joined : "verification failed");
    // A Raspberry Pi has no real-time clock: until a time server answers, its clock may read months
    // before a certificate made today. Said with the clock; the connection is tried again with
    // back-off, so it succeeds once the clock moves.
    if ((mbedtls_ssl_get_verify_result(&s->ssl) & MBEDTLS_X509_BADCERT_FUTURE) && n > 0 && (size_t)n < errlen) {
        time_t now = time(NULL);
        struct tm tm;
        char when[32] = "?";
        if (gmtime_r(&now, &tm)) strftime(when, sizeof when, "%Y-%m-%d", &tm);
        snprintf(err + n, errlen - (size_t)n, " (this machine's clock reads %s: not set yet? tried again as it moves)", when);
    }
}

static int outcome(ctls_session *s, int ret, const char *doing, char *err, size_t errlen) {
    switch (ret) {
    case MBEDTLS_ERR_SSL_WANT_READ: return CTLS_WANT_READ;
    case MBEDTLS_ERR_SSL_WANT_WRITE: return CTLS_WANT_WRITE;
#ifdef MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET
    case MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET: return CTLS_WANT_READ;
#endif
    case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY:
    case MBEDTLS_ERR_SSL_CONN_EOF:
        return CTLS_CLOSED;
    case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE:
        return CTLS_ALERT;
    case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
        verify_failure(s, err, errlen);
        return CTLS_FAILED;
    case MBEDTLS_ERR_NET_SEND_FAILED:
    case MBEDTLS_ERR_NET_RECV_FAILED:
        if (s->io_errno == EPIPE || s->io_errno == ECONNRESET) return CTLS_CLOSED;
        snprintf(err, errlen, "%s: %s", doing, strerror(s->io_errno));
        return CTLS_FAILED;
    default:
        say(err, errlen, "%s: %s", doing, ret);
        return CTLS_FAILED;
    }
}

int ctls_handshake(ctls_session *s, char *err, size_t errlen) {
    int ret = mbedtls_ssl_handshake(&s->ssl);
    if (ret == 0) return 0;
    return outcome(s, ret, "the TLS handshake failed", err, errlen);
}

long ctls_read(ctls_session *s, unsigned char *buf, size_t len, char *err, size_t errlen) {
    int ret = mbedtls_ssl_read(&s->ssl, buf, len);
    if (ret > 0) return ret;
    if (ret == 0) return CTLS_CLOSED;
    return outcome(s, ret, "reading TLS failed", err, errlen);
}

long ctls_write(ctls_session *s, const unsigned char *buf, size_t len, char *err, size_t errlen) {
    int ret = mbedtls_ssl_write(&s->ssl, buf, len);
    if (ret >= 0) return ret;
    int r = outcome(s, ret, "writing TLS failed", err, errlen);
    if (r == CTLS_CLOSED) r = CTLS_FAILED, snprintf(err, errlen, "the broker closed the TLS session");
    return r;
}

size_t ctls_pending(ctls_session *s) { return mbedtls_ssl_get_bytes_avail(&s->ssl); }

void ctls_close_notify(ctls_session *s) { (void)mbedtls_ssl_close_notify(&s->ssl); }

void ctls_describe(ctls_session *s, char *out, size_t outlen) {
    snprintf(out, outlen, "%s %s", mbedtls_ssl_get_version(&s->ssl), mbedtls_ssl_get_ciphersuite(&s->ssl));
}

const char *ctls_library(void) { return MBEDTLS_VERSION_STRING_FULL; }
