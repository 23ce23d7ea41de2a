// The few functions Swift cannot reach through the headers; see include/CLinux.h.
#define _GNU_SOURCE
#include <sys/socket.h>

int clinux_accept_nonblock(int fd) { return accept4(fd, 0, 0, SOCK_NONBLOCK | SOCK_CLOEXEC); }
