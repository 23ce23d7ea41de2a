#include "CBlueZ.h"
#include <linux/filter.h>
#include <sys/socket.h>

const unsigned long cbluez_HCIDEVUP = HCIDEVUP;
const unsigned long cbluez_HCIDEVDOWN = HCIDEVDOWN;
const unsigned long cbluez_HCIGETDEVINFO = HCIGETDEVINFO;

int cbluez_ioctl_int(int fd, unsigned long request, int arg) { return ioctl(fd, request, arg); }
int cbluez_ioctl_ptr(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }

int cbluez_monitor_filter_commands(int fd, unsigned short index) {
    // struct hci_mon_hdr { le16 opcode; le16 index; le16 len; }: BPF loads are big-endian,
    // so compare against byte-swapped little-endian values.
    unsigned short op_be = (unsigned short)((2 /* HCI_MON_COMMAND_PKT */ << 8) | 0);
    unsigned short idx_be = (unsigned short)(((index & 0xff) << 8) | (index >> 8));
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, op_be, 0, 3),
        BPF_STMT(BPF_LD | BPF_H | BPF_ABS, 2),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, idx_be, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 0xffff),
        BPF_STMT(BPF_RET | BPF_K, 0),
    };
    struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}

int cbluez_raw_le_connections_only(int fd) {
    // A raw channel's packets start with the H4 type byte: 0x04, the event code, its length, and
    // for LE Meta (0x3e) the subevent. Of LE Meta only LE Connection Complete (0x01) and LE
    // Enhanced Connection Complete (0x0a) pass: the advertiser uses nothing else, and the
    // advertising reports another program's scan of this adapter brings (hundreds a second) are
    // dropped in the kernel, so the beacon does not wake for them. Other events pass.
    struct sock_filter code[] = {
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 1),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x3e, 0, 3),
        BPF_STMT(BPF_LD | BPF_B | BPF_ABS, 3),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x01, 1, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0a, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, 0xffff),
        BPF_STMT(BPF_RET | BPF_K, 0),
    };
    struct sock_fprog prog = { .len = sizeof(code) / sizeof(code[0]), .filter = code };
    return setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &prog, sizeof(prog));
}
