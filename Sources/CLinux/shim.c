// The few functions Swift cannot reach through the headers; see include/CLinux.h.
#define _GNU_SOURCE
#include <sys/socket.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <string.h>
#include "CLinux.h"

int clinux_accept_nonblock(int fd) { return accept4(fd, 0, 0, SOCK_NONBLOCK | SOCK_CLOEXEC); }

int clinux_local_subnets(struct clinux_subnet *out, int max) {
    struct ifaddrs *list;
    if (getifaddrs(&list) != 0) return -1;
    int n = 0;
    for (struct ifaddrs *i = list; i && n < max; i = i->ifa_next) {
        if (!i->ifa_addr || !i->ifa_netmask || !(i->ifa_flags & IFF_UP)) continue;
        struct clinux_subnet *s = &out[n];
        memset(s, 0, sizeof *s);
        if (i->ifa_addr->sa_family == AF_INET) {
            s->length = 4;
            memcpy(s->address, &((struct sockaddr_in *)i->ifa_addr)->sin_addr, 4);
            memcpy(s->netmask, &((struct sockaddr_in *)i->ifa_netmask)->sin_addr, 4);
        } else if (i->ifa_addr->sa_family == AF_INET6) {
            s->length = 16;
            memcpy(s->address, &((struct sockaddr_in6 *)i->ifa_addr)->sin6_addr, 16);
            memcpy(s->netmask, &((struct sockaddr_in6 *)i->ifa_netmask)->sin6_addr, 16);
        } else {
            continue;
        }
        s->ifindex = if_nametoindex(i->ifa_name);
        n++;
    }
    freeifaddrs(list);
    return n;
}

int clinux_want_pktinfo(int fd, int family) {
    int on = 1;
    return family == AF_INET6 ? setsockopt(fd, IPPROTO_IPV6, IPV6_RECVPKTINFO, &on, sizeof on)
                              : setsockopt(fd, IPPROTO_IP, IP_PKTINFO, &on, sizeof on);
}

long clinux_recv_from(int fd, void *buf, unsigned long len, struct clinux_source *from) {
    struct sockaddr_storage ss;
    union { struct cmsghdr align; char bytes[256]; } control;
    struct iovec iov = { buf, len };
    struct msghdr m;
    memset(&m, 0, sizeof m);
    memset(&ss, 0, sizeof ss);
    m.msg_name = &ss;
    m.msg_namelen = sizeof ss;
    m.msg_iov = &iov;
    m.msg_iovlen = 1;
    m.msg_control = control.bytes;
    m.msg_controllen = sizeof control.bytes;
    long r = recvmsg(fd, &m, 0);
    if (r < 0) return r;
    memset(from, 0, sizeof *from);
    if (ss.ss_family == AF_INET) {
        struct sockaddr_in *a = (struct sockaddr_in *)&ss;
        from->length = 4;
        memcpy(from->address, &a->sin_addr, 4);
        from->port = ntohs(a->sin_port);
    } else if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
        from->length = 16;
        memcpy(from->address, &a->sin6_addr, 16);
        from->port = ntohs(a->sin6_port);
    }
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c)) {
        if (c->cmsg_level == IPPROTO_IP && c->cmsg_type == IP_PKTINFO) {
            struct in_pktinfo p;
            memcpy(&p, CMSG_DATA(c), sizeof p);
            from->ifindex = (unsigned int)p.ipi_ifindex;
        } else if (c->cmsg_level == IPPROTO_IPV6 && c->cmsg_type == IPV6_PKTINFO) {
            struct in6_pktinfo p;
            memcpy(&p, CMSG_DATA(c), sizeof p);
            from->ifindex = p.ipi6_ifindex;
        }
    }
    return r;
}

#include <link.h>
#include <sys/mman.h>
#include <unistd.h>

static int advise_first_object(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    int *failed = data;
    long page = sysconf(_SC_PAGESIZE);
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD) continue;
        uintptr_t start = (uintptr_t)(info->dlpi_addr + p->p_vaddr) & ~(uintptr_t)(page - 1);
        uintptr_t end = (uintptr_t)(info->dlpi_addr + p->p_vaddr + p->p_filesz + page - 1) & ~(uintptr_t)(page - 1);
        if (end > start && madvise((void *)start, end - start, MADV_RANDOM) != 0) *failed = 1;
    }
    return 1;   // the first object is the executable itself; the vDSO is not ours to advise
}

int clinux_advise_random_image(void) {
    int failed = 0;
    dl_iterate_phdr(advise_first_object, &failed);
    return failed ? -1 : 0;
}
