#ifndef ALTBEACOND_CLINUX_H
#define ALTBEACOND_CLINUX_H
// Linux headers that Swift's Glibc module does not bring in.
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <sys/eventfd.h>
#include <pthread.h>
#include <linux/capability.h>
#include <linux/rfkill.h>

// SOCK_* are enum constants in glibc's bits/socket_type.h, which the static SDK's Glibc module
// does not export: hand them over as plain ints.
static const int clinux_sock_dgram_cloexec = SOCK_DGRAM | SOCK_CLOEXEC;
static const int clinux_sock_raw_cloexec_nonblock = SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK;
static const int clinux_sock_seqpacket_cloexec_nonblock = SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK;
static const int clinux_sock_stream_cloexec_nonblock = SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK;

// accept4 is declared only with _GNU_SOURCE: an accepted socket, non-blocking and close-on-exec
// from the start (an accepted socket does not inherit O_NONBLOCK).
int clinux_accept_nonblock(int fd);
#endif
