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

// An address of this machine's interfaces (getifaddrs: up, IPv4 or IPv6), with its netmask and
// the interface's index: for mDNS's source address check (RFC 6762 §11).
struct clinux_subnet {
    unsigned int ifindex;
    unsigned char length;          // 4 or 16
    unsigned char address[16];
    unsigned char netmask[16];
};
// Up to `max` of them into `out`: how many, or -1 (errno) when they cannot be listed.
int clinux_local_subnets(struct clinux_subnet *out, int max);

// Where a datagram came from: its source address and port, and the interface it arrived on
// (0 when the socket was not asked for it, clinux_want_pktinfo).
struct clinux_source {
    unsigned int ifindex;
    unsigned short port;
    unsigned char length;          // 4 or 16; 0 when unknown
    unsigned char address[16];
};
// Asks the kernel to tell each datagram's arrival interface (IP_PKTINFO, IPV6_RECVPKTINFO).
int clinux_want_pktinfo(int fd, int family);
// recvmsg: the datagram's length (or -1, errno) and its source.
long clinux_recv_from(int fd, void *buf, unsigned long len, struct clinux_source *from);

// madvise(MADV_RANDOM) over this executable's loaded segments: a page of the binary faulted in
// reads that page only, not the kernel's read-around window, so the neighbouring pages that
// fault-around maps are the ones already run. 0, or -1 (errno) if a segment refused.
int clinux_advise_random_image(void);
#endif
