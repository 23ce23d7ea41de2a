// wedge.so: an LD_PRELOAD shim for btvirt (BlueZ's controller emulator) that makes one emulated
// controller *wedged*: it stops answering HCI commands, like a Pi's UART controller after which
// the kernel logs "command 0x.... tx timeout". tb_btvirt_start (lib.sh) always preloads it.
//
// Wedge state comes from files, read at every HCI command packet (an open() that fails with
// ENOENT when there is no wedge):
//   /run/tb-wedge       soft wedge: commands are swallowed, except HCI Reset (01 03 0c 00), which
//                       is passed to the emulator and deletes the file (the Reset the kernel sends
//                       when the adapter is brought up cures it, as on a real controller)
//   /run/tb-wedge-hard  hard wedge: every command is swallowed, Reset too; only deleting the
//                       file cures it
// The file's content names the controller ("hci1"); empty or anything else means hci0.
// A swallowed command never reaches the emulator, so no Command Complete/Status ever comes back.
//
// How it finds the controllers: btvirt opens /dev/vhci once per controller (open(), O_NONBLOCK),
// writes the create request and read()s the kernel's answer, ff <opcode> <index le16>, which
// names the hciN of that fd. Then its main loop read()s one packet per call (BlueZ 5.66 and 5.82
// import open, read, recv, recvmsg, write, writev: no readv, no openat; open64/openat are wrapped
// anyway). A swallowed packet is turned into a 1-byte vendor packet (ff), which btvirt's
// vhci_read_callback ignores: returning -1/EAGAIN or 0 instead would make the callback return
// false, and BlueZ's io layer then drops the fd's read handler for good.
//
// Log lines ("wedge: ...") go to btvirt's stderr ($TB_STATE/btvirt.log).
// Build: gcc -shared -fPIC -O2 -Wall -Wextra -o wedge.so wedge.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define WEDGE_SOFT "/run/tb-wedge"
#define WEDGE_HARD "/run/tb-wedge-hard"
#define MAX_FDS 1024

// per fd: 0 = not /dev/vhci; -1 = /dev/vhci, index not known yet; n > 0 = controller hci(n-1)
static int vhci_fd[MAX_FDS];

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static ssize_t (*real_read)(int, void *, size_t);
static int (*real_close)(int);

static void *next(const char *name) { return dlsym(RTLD_NEXT, name); }

static void log_line(const char *fmt, ...) {
    char line[160];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if ((size_t)n >= sizeof line) n = sizeof line - 1;
    ssize_t w = write(2, line, (size_t)n);
    (void)w;
}

static int is_vhci(const char *path) { return path && strcmp(path, "/dev/vhci") == 0; }

static int track(int fd, const char *path) {
    if (fd >= 0 && fd < MAX_FDS) vhci_fd[fd] = is_vhci(path) ? -1 : 0;
    return fd;
}

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? (mode_t)va_arg(ap, int) : 0;
}

int open(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    if (!real_open) real_open = next("open");
    return track(real_open(path, flags, mode), path);
}

int open64(const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    if (!real_open64) real_open64 = next("open64");
    return track(real_open64(path, flags, mode), path);
}

int openat(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    if (!real_openat) real_openat = next("openat");
    return track(real_openat(dirfd, path, flags, mode), path);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    va_list ap;
    va_start(ap, flags);
    mode_t mode = mode_arg(flags, ap);
    va_end(ap);
    if (!real_openat64) real_openat64 = next("openat64");
    return track(real_openat64(dirfd, path, flags, mode), path);
}

int close(int fd) {
    if (!real_close) real_close = next("close");
    if (fd >= 0 && fd < MAX_FDS) vhci_fd[fd] = 0;
    return real_close(fd);
}

// wedge_file PATH INDEX: 1 if PATH exists and wedges controller hciINDEX
static int wedge_file(const char *path, int index) {
    char buf[16];
    if (!real_open) real_open = next("open");
    int fd = real_open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t n = real_read(fd, buf, sizeof buf - 1);
    if (!real_close) real_close = next("close");
    real_close(fd);
    int target = 0;
    if (n > 3 && memcmp(buf, "hci", 3) == 0 && buf[3] >= '0' && buf[3] <= '9') {
        buf[n] = 0;
        for (const char *p = buf + 3; *p >= '0' && *p <= '9'; p++) target = target * 10 + (*p - '0');
    }
    return target == index;
}

ssize_t read(int fd, void *buf, size_t count) {
    if (!real_read) real_read = next("read");
    ssize_t r = real_read(fd, buf, count);
    if (r < 1 || fd < 0 || fd >= MAX_FDS || vhci_fd[fd] == 0) return r;
    unsigned char *p = buf;
    if (vhci_fd[fd] < 0) {
        // the create answer: ff <opcode> <index le16>
        if (r >= 4 && p[0] == 0xff) {
            vhci_fd[fd] = (p[2] | p[3] << 8) + 1;
            log_line("wedge: fd %d is hci%d\n", fd, vhci_fd[fd] - 1);
        }
        return r;
    }
    if (p[0] != 0x01 || r < 4) return r;   // only HCI command packets (01 <opcode le16> <len>)
    int index = vhci_fd[fd] - 1;
    unsigned opcode = p[1] | p[2] << 8;
    int hard = wedge_file(WEDGE_HARD, index);
    int soft = wedge_file(WEDGE_SOFT, index);
    if (!hard && !soft) return r;
    if (opcode == 0x0c03 && soft) {
        if (unlink(WEDGE_SOFT) == 0) log_line("wedge: hci%d: HCI Reset clears the soft wedge\n", index);
        if (!hard) return r;
    }
    log_line("wedge: hci%d: swallowed command 0x%04x (%s wedge)\n", index, opcode, hard ? "hard" : "soft");
    p[0] = 0xff;   // a 1-byte vendor packet: btvirt ignores it and keeps reading the fd
    return 1;
}
