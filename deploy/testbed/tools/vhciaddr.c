// vhciaddr.so: an LD_PRELOAD shim for btvirt that makes its controllers look like a Pi's on-board
// controller without a usable address, as far as hci_vhci allows (scenario address-repair.sh).
// Only btvirt's first controller (hci0) is altered; its mode is read from /run/tb-vhci-mode:
//   extconfig  the create request (ff 00) gets hci_vhci's 0x40 bit: HCI_QUIRK_EXTERNAL_CONFIG,
//              so the kernel keeps the controller unconfigured and HCIDEVUP fails with
//              EOPNOTSUPP, as for a Pi whose btbcm found a chip default address. (Its missing
//              option is "external configuration", not "public address": hci_vhci has no
//              set_bdaddr, and HCI_QUIRK_INVALID_BDADDR cannot be set from user space.)
//   aaaa       the controller answers Read BD ADDR with AA:AA:AA:AA:AA:AA, BCM43430A1's chip
//              default (a configured controller with an address many boards share).
// btvirt writes events with writev() (BlueZ's io_send) and the create request with write(), and
// reads the create response with read(): BlueZ 5.82 checks that its opcode is the one it sent, so
// the 0x40 bit added to the request is taken off the response again.
// Build: gcc -shared -fPIC -O2 -Wall -Wextra -o vhciaddr.so vhciaddr.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_FDS 1024
static char vhci[MAX_FDS];   // 1: the first /dev/vhci fd (hci0, altered); 2: a later one
static int opened;
static int create_response_due;   // the next read on the altered fd is the create response
static char mode[16];

static void read_mode(void) {
    int (*o)(const char *, int, ...) = dlsym(RTLD_NEXT, "open");
    int fd = o("/run/tb-vhci-mode", O_RDONLY);
    memset(mode, 0, sizeof mode);
    if (fd < 0) return;
    ssize_t n = read(fd, mode, sizeof mode - 1);
    close(fd);
    for (ssize_t i = 0; i < n; i++) if (mode[i] == '\n') mode[i] = 0;
}

int open(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...);
    if (!real) real = dlsym(RTLD_NEXT, "open");
    va_list ap;
    va_start(ap, flags);
    mode_t m = (flags & O_CREAT) ? (mode_t)va_arg(ap, int) : 0;
    va_end(ap);
    int fd = real(path, flags, m);
    if (fd >= 0 && fd < MAX_FDS) {
        vhci[fd] = strcmp(path, "/dev/vhci") != 0 ? 0 : ++opened == 1 ? 1 : 2;
        if (vhci[fd] == 1) read_mode();
    }
    return fd;
}

ssize_t write(int fd, const void *buf, size_t n) {
    static ssize_t (*real)(int, const void *, size_t);
    if (!real) real = dlsym(RTLD_NEXT, "write");
    if (fd >= 0 && fd < MAX_FDS && vhci[fd] == 1 && n == 2 && ((const unsigned char *)buf)[0] == 0xff
        && strcmp(mode, "extconfig") == 0) {
        unsigned char req[2] = {0xff, (unsigned char)(((const unsigned char *)buf)[1] | 0x40)};
        create_response_due = 1;
        return real(fd, req, 2);
    }
    return real(fd, buf, n);
}

ssize_t writev(int fd, const struct iovec *iov, int cnt) {
    static ssize_t (*real)(int, const struct iovec *, int);
    if (!real) real = dlsym(RTLD_NEXT, "writev");
    if (fd < 0 || fd >= MAX_FDS || vhci[fd] != 1 || strcmp(mode, "aaaa") != 0) return real(fd, iov, cnt);
    unsigned char p[1100];
    size_t len = 0;
    for (int i = 0; i < cnt; i++) {
        if (len + iov[i].iov_len > sizeof p) return real(fd, iov, cnt);
        memcpy(p + len, iov[i].iov_base, iov[i].iov_len);
        len += iov[i].iov_len;
    }
    // 04 0e 0a <ncmd> 09 10 <status> <bdaddr>: Command Complete of Read BD ADDR (0x1009)
    if (len == 13 && p[0] == 0x04 && p[1] == 0x0e && p[4] == 0x09 && p[5] == 0x10 && p[6] == 0x00) {
        memset(p + 7, 0xaa, 6);
        struct iovec one = {p, len};
        return real(fd, &one, 1);
    }
    return real(fd, iov, cnt);
}

ssize_t read(int fd, void *buf, size_t n) {
    static ssize_t (*real)(int, void *, size_t);
    if (!real) real = dlsym(RTLD_NEXT, "read");
    ssize_t r = real(fd, buf, n);
    if (create_response_due && fd >= 0 && fd < MAX_FDS && vhci[fd] == 1 && r >= 2) {
        unsigned char *p = buf;
        if (p[0] == 0xff) p[1] &= (unsigned char)~0x40;   // ff <opcode> <index>: as btvirt asked
        create_response_due = 0;
    }
    return r;
}
