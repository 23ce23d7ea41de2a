#include "CBlueZ.h"

const unsigned long cbluez_HCIDEVUP = HCIDEVUP;
const unsigned long cbluez_HCIDEVDOWN = HCIDEVDOWN;
const unsigned long cbluez_HCIDEVRESET = HCIDEVRESET;
const unsigned long cbluez_HCIGETDEVINFO = HCIGETDEVINFO;
const unsigned long cbluez_HCIGETDEVLIST = HCIGETDEVLIST;

int cbluez_ioctl_int(int fd, unsigned long request, int arg) { return ioctl(fd, request, arg); }
int cbluez_ioctl_ptr(int fd, unsigned long request, void *arg) { return ioctl(fd, request, arg); }

void cbluez_filter_all_events(struct hci_filter *f, int with_acl) {
    hci_filter_clear(f);
    hci_filter_set_ptype(HCI_EVENT_PKT, f);
    if (with_acl) hci_filter_set_ptype(HCI_COMMAND_PKT, f);
    hci_filter_all_events(f);
}
