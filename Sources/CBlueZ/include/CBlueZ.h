#ifndef ALTBEACOND_CBLUEZ_H
#define ALTBEACOND_CBLUEZ_H
// BlueZ's libbluetooth (GPL-2.0-or-later): HCI and L2CAP socket API and ioctls.
#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>
#include <bluetooth/l2cap.h>
#include <sys/ioctl.h>

// ioctl request numbers are function-like macros (_IOW/_IOR) that Swift cannot import.
extern const unsigned long cbluez_HCIDEVUP;
extern const unsigned long cbluez_HCIDEVDOWN;
extern const unsigned long cbluez_HCIGETDEVINFO;

// ioctl is variadic in C; Swift cannot call variadic C functions directly.
int cbluez_ioctl_int(int fd, unsigned long request, int arg);
int cbluez_ioctl_ptr(int fd, unsigned long request, void *arg);

// Classic BPF on an HCI monitor socket: pass only command packets (HCI_MON_COMMAND_PKT) for
// controller `index`, so traffic of other controllers never wakes the daemon.
int cbluez_monitor_filter_commands(int fd, unsigned short index);
/// Of LE Meta events, only connection completes pass a raw HCI socket (kernel-side BPF): the
/// advertiser's socket.
int cbluez_raw_le_connections_only(int fd);
#endif
