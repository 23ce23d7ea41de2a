// advgen: an advertising-report generator for the monitor's benchmark (deploy/testbed/bench/
// monitor.sh). BlueZ's emulator reports an advertiser to a scanner when advertising is enabled,
// so advertising switched off, given new data and on again RATE times a second on one controller
// makes every scanner on the emulated radio receive about RATE reports a second. The data cycles through BEACONS AltBeacon
// frames (the rig's UUID, major 1..BEACONS, minor 2), so a monitor expecting those beacons hears
// each of them RATE/BEACONS times a second.
//
// usage: advgen [-i hciN] [--rate N] [--beacons N] [--seconds S]
// Prints "advgen <data sets> <seconds> <rate achieved>/s" at the end; exit 0, 2 on HCI errors.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <bluetooth/bluetooth.h>
#include <bluetooth/hci.h>
#include <bluetooth/hci_lib.h>

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmd(int dd, uint16_t ocf, void *param, int len) {
  uint8_t status = 0xff;
  struct hci_request rq = {.ogf = OGF_LE_CTL, .ocf = ocf, .cparam = param, .clen = len, .rparam = &status, .rlen = 1};
  if (hci_send_req(dd, &rq, 2000) < 0) return -1;
  return status;
}

int main(int argc, char **argv) {
  int dev = 0, rate = 500, beacons = 20, seconds = 20;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "-i") && i + 1 < argc) dev = atoi(argv[++i] + 3);
    else if (!strcmp(argv[i], "--rate") && i + 1 < argc) rate = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--beacons") && i + 1 < argc) beacons = atoi(argv[++i]);
    else if (!strcmp(argv[i], "--seconds") && i + 1 < argc) seconds = atoi(argv[++i]);
    else { fprintf(stderr, "usage: advgen [-i hciN] [--rate N] [--beacons N] [--seconds S]\n"); return 2; }
  }
  if (rate < 1 || beacons < 1 || beacons > 65535 || seconds < 1) return 2;
  int ctl = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
  if (ctl >= 0) { ioctl(ctl, HCIDEVUP, dev); close(ctl); }
  int dd = hci_open_dev(dev);
  if (dd < 0) { perror("advgen: hci_open_dev"); return 2; }
  uint8_t off = 0;
  cmd(dd, 0x000a, &off, 1);
  le_set_advertising_parameters_cp p = {.min_interval = htobs(160), .max_interval = htobs(160), .advtype = 0x03,
                                       .own_bdaddr_type = 0, .chan_map = 7, .filter = 0};
  if (cmd(dd, OCF_LE_SET_ADVERTISING_PARAMETERS, &p, sizeof p) != 0) { fprintf(stderr, "advgen: parameters refused\n"); return 2; }
  static const uint8_t head[] = {0x02, 0x01, 0x06, 0x1b, 0xff, 0x18, 0x01, 0xbe, 0xac, 0x2f, 0x23, 0x44, 0x54, 0xcf, 0x6d,
                                 0x4a, 0x0f, 0xad, 0xf2, 0xf4, 0x91, 0x1b, 0xa9, 0xff, 0xa6};
  le_set_advertising_data_cp d;
  memset(&d, 0, sizeof d);
  d.length = 31;
  memcpy(d.data, head, sizeof head);
  d.data[27] = 0x00; d.data[28] = 0x02; d.data[29] = 0xc5; d.data[30] = 0x00;
  uint8_t on = 1;
  long long t0 = now_ns(), period = 1000000000LL / rate, end = t0 + (long long)seconds * 1000000000LL;
  long sets = 0;
  int enabled = 0;
  while (now_ns() < end) {
    int major = 1 + (int)(sets % beacons);
    d.data[25] = (uint8_t)(major >> 8); d.data[26] = (uint8_t)major;
    // The emulator reports an advertiser when advertising is enabled: off, new data, on.
    if (enabled) cmd(dd, 0x000a, &off, 1);
    if (cmd(dd, OCF_LE_SET_ADVERTISING_DATA, &d, sizeof d) != 0) { fprintf(stderr, "advgen: data refused\n"); return 2; }
    cmd(dd, 0x000a, &on, 1);
    enabled = 1;
    sets++;
    long long next = t0 + sets * period, n = now_ns();
    if (next > n) { struct timespec ts = {(time_t)((next - n) / 1000000000LL), (long)((next - n) % 1000000000LL)}; nanosleep(&ts, NULL); }
  }
  double took = (now_ns() - t0) / 1e9;
  cmd(dd, 0x000a, &off, 1);
  printf("advgen %ld %.1f %.0f/s\n", sets, took, sets / took);
  return 0;
}
