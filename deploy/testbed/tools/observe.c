// observe: a passive LE scanner on raw HCI sockets, the testbed's "phone on the wall".
//
// Prints one line per advertising report heard:
//     <CLOCK_MONOTONIC ms> <addr> <rssi> <advertising data, lowercase hex>
// Scanning is passive with duplicate filtering OFF. Reports with empty data are ignored.
//
// BlueZ's emulator (btvirt) does not advertise periodically: a scanner gets one report per
// advertiser when it enables scanning, or when the advertiser enables advertising. So by default
// the observer re-arms scanning every --poll MS (100): each cycle reports what is on air *now*,
// which makes "heard within" and "silent for" measurable with poll-interval resolution.
// Both scan families are cycled when the controller has LE extended advertising: legacy scans
// only report legacy advertising, extended scans only extended sets (emulator behaviour); the
// extended scan then stays enabled between cycles (5.82's emulator sends sets periodically). A
// controller refusing legacy scan commands (0x0C, 0x01) is scanned with extended commands only.
// Caveat (emulator): a legacy scan reports an advertiser's *legacy* data even when it advertises
// with extended commands; stale legacy data can then show up.
//
// usage: observe [-i hciN] [--hex HEX] [--until-hex HEX] [--count N] [--timeout MS]
//                [--absent-for MS] [--poll MS] [--scan auto|legacy|ext] [--no-setup] [--active] [--quiet]
//   -i hciN          controller to scan with (default hci1); brought up if down
//   --hex HEX        only consider reports whose data equals HEX (others are ignored)
//   --until-hex HEX  same as --hex HEX --count 1
//   --count N        exit 0 after N matching reports
//   --timeout MS     give up after MS: exit 1 (or exit 0 when only streaming, i.e. no --count
//                    and no --absent-for)
//   --absent-for MS  exit 0 as soon as no matching report has been heard for MS in a row;
//                    with no --timeout, the timeout is MS (i.e. "silent for the whole window")
//   --poll MS        re-arm scanning every MS (default 100; 0 = enable once, for real radios)
//   --scan FAMILY    auto (default: legacy, plus extended if supported), legacy, or ext
//   --no-setup       do not touch scan state: just listen (another observer scans)
//   --active         active scanning: scan responses are reported too (as their own lines)
//   --quiet          do not print reports (the final line of --count/--absent-for still prints)
// exit: 0 success, 1 timeout/condition not met, 2 usage or HCI error.
// On success with --count, the last line printed on stdout is "heard <ms>" (monotonic ms of the
// last matching report); with --absent-for it is "silent <ms>" (monotonic ms when it succeeded).
#include <errno.h>
#include <poll.h>
#include <signal.h>
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

static int dd = -1;
static volatile sig_atomic_t stop = 0;

// what we look for
static uint8_t want[256];
static int want_len = -1;
static long count = 0, matched = 0;
static long long last_match;
static int quiet = 0, done = 0, rc = 1;
static long long loop_deadline = 0;  // commands stop waiting then (0: no limit but their own 2 s)
static int scanning_legacy = 0, scanning_ext = 0;

static long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_signal(int sig) { (void)sig; stop = 1; }

static void report(long long heard, const uint8_t *addr, int rssi, const uint8_t *data, int dlen) {
    if (dlen == 0 || done) return;
    if (want_len >= 0 && (dlen != want_len || memcmp(data, want, dlen))) return;
    matched++;
    last_match = heard;
    if (!quiet) {
        char a[18];
        ba2str((const bdaddr_t *)addr, a);
        printf("%lld %s %d ", heard, a, rssi);
        for (int k = 0; k < dlen; k++) printf("%02x", data[k]);
        printf("\n");
    }
    if (count > 0 && matched >= count) {
        printf("heard %lld\n", heard);
        done = 1;
        rc = 0;
    }
}

// Handles one HCI event packet (advertising reports); returns nothing.
static void handle_event(const uint8_t *buf, ssize_t len, long long heard) {
    if (len < 4 || buf[0] != HCI_EVENT_PKT || buf[1] != EVT_LE_META_EVENT) return;
    const uint8_t *e = buf + 3, *end = buf + len;
    uint8_t sub = *e++;
    if (sub != 0x02 && sub != 0x0d) return;
    int nrep = *e++;
    for (int r = 0; r < nrep; r++) {
        if (sub == 0x02) {  // LE Advertising Report
            if (e + 9 > end) return;
            int dlen = e[8];
            const uint8_t *data = e + 9;
            if (data + dlen + 1 > end) return;
            report(heard, e + 2, (int8_t)data[dlen], data, dlen);
            e = data + dlen + 1;
        } else {  // LE Extended Advertising Report
            if (e + 24 > end) return;
            int dlen = e[23];
            const uint8_t *data = e + 24;
            if (data + dlen > end) return;
            report(heard, e + 3, (int8_t)e[13], data, dlen);
            e = data + dlen;
        }
    }
}

// Reads one packet (waiting up to wait_ms) and handles it. Returns the packet length, 0 on
// timeout, -1 on error (controller gone).
static ssize_t read_one(uint8_t *buf, size_t size, int wait_ms) {
    struct pollfd p = {.fd = dd, .events = POLLIN};
    int n = poll(&p, 1, wait_ms < 0 ? 0 : wait_ms);
    if (n < 0) return errno == EINTR ? 0 : -1;
    if (n == 0) return 0;
    ssize_t len = read(dd, buf, size);
    if (len < 0) return (errno == EINTR || errno == EAGAIN) ? 0 : -1;
    handle_event(buf, len, now_ms());
    return len;
}

// Sends an LE command and waits (2 s) for its Command Complete, handling reports meanwhile.
// Returns the status byte, -1 on timeout, -2 if the controller is gone.
static int le_cmd(uint16_t ocf, const void *param, int plen, uint8_t *ret, int rlen) {
    uint16_t opcode = cmd_opcode_pack(OGF_LE_CTL, ocf);
    uint8_t pkt[4 + 255];
    pkt[0] = HCI_COMMAND_PKT;
    pkt[1] = opcode & 0xff;
    pkt[2] = opcode >> 8;
    pkt[3] = (uint8_t)plen;
    if (plen) memcpy(pkt + 4, param, plen);
    if (write(dd, pkt, 4 + plen) < 0) return errno == EINTR ? -1 : -2;
    long long deadline = now_ms() + 2000;
    if (loop_deadline > 0 && loop_deadline < deadline) deadline = loop_deadline;
    uint8_t buf[HCI_MAX_EVENT_SIZE];
    for (;;) {
        long long left = deadline - now_ms();
        if (left <= 0) return -1;
        ssize_t len = read_one(buf, sizeof(buf), (int)left);
        if (len < 0) return -2;
        if (len >= 7 && buf[0] == HCI_EVENT_PKT && buf[1] == EVT_CMD_COMPLETE &&
            (buf[4] | buf[5] << 8) == opcode) {
            if (ret && rlen > 0) memcpy(ret, buf + 6, len - 6 < rlen ? len - 6 : rlen);
            return buf[6];
        }
        if (len >= 7 && buf[0] == HCI_EVENT_PKT && buf[1] == EVT_CMD_STATUS &&
            (buf[5] | buf[6] << 8) == opcode && buf[3] != 0)
            return buf[3];
    }
}

static int legacy_scan(int enable) {
    uint8_t p[2] = {enable ? 1 : 0, 0x00 /* no duplicate filter */};
    int st = le_cmd(0x000c, p, sizeof(p), NULL, 0);  // LE Set Scan Enable
    if (st == 0) scanning_legacy = enable;
    return st;
}

static int ext_scan(int enable) {
    uint8_t p[6] = {enable ? 1 : 0, 0x00, 0, 0, 0, 0};
    int st = le_cmd(0x0042, p, sizeof(p), NULL, 0);  // LE Set Extended Scan Enable
    if (st == 0) scanning_ext = enable;
    return st;
}

// Re-arms one scan family (ext: 0 legacy, 1 extended): disable if enabled, enable (the emulator
// reports what is on air now), then disable again if then_off. Returns -2 if gone.
static int cycle(int ext, int then_off) {
    int (*f)(int) = ext ? ext_scan : legacy_scan;
    int *on = ext ? &scanning_ext : &scanning_legacy;
    int st;
    if (*on) {
        st = f(0);
        if (st == -2) return -2;
        if (st == 0x0c) *on = 0;
    }
    st = f(1);
    if (st == 0x0c) {  // enabled behind our back (a command we stopped waiting for)
        f(0);
        st = f(1);
    }
    if (st == -2) return -2;
    if (done || !then_off) return 0;
    st = f(0);
    if (st == 0x0c) *on = 0;
    return st == -2 ? -2 : 0;
}

static int unhex(const char *s, uint8_t *out, int max) {
    int n = 0;
    while (*s) {
        if (*s == ' ' || *s == ':' || *s == '-') { s++; continue; }
        unsigned v;
        if (!s[1] || sscanf(s, "%2x", &v) != 1 || n >= max) return -1;
        out[n++] = (uint8_t)v;
        s += 2;
    }
    return n;
}

static void usage(void) {
    fprintf(stderr, "usage: observe [-i hciN] [--hex HEX] [--until-hex HEX] [--count N] "
                    "[--timeout MS] [--absent-for MS] [--poll MS] [--scan auto|legacy|ext] "
                    "[--no-setup] [--active] [--quiet]\n");
    exit(2);
}

int main(int argc, char **argv) {
    const char *dev = "hci1", *scan = "auto";
    long timeout = -1, absent = -1, pollms = 100;
    int setup = 1, active = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-i") && v) { dev = v; i++; }
        else if ((!strcmp(a, "--hex") || !strcmp(a, "--until-hex")) && v) {
            want_len = unhex(v, want, sizeof(want));
            if (want_len < 0) usage();
            if (!strcmp(a, "--until-hex")) count = 1;
            i++;
        }
        else if (!strcmp(a, "--count") && v) { count = atol(v); i++; }
        else if (!strcmp(a, "--timeout") && v) { timeout = atol(v); i++; }
        else if (!strcmp(a, "--absent-for") && v) { absent = atol(v); i++; }
        else if (!strcmp(a, "--poll") && v) { pollms = atol(v); i++; }
        else if (!strcmp(a, "--scan") && v) { scan = v; i++; }
        else if (!strcmp(a, "--no-setup")) setup = 0;
        else if (!strcmp(a, "--active")) active = 1;
        else if (!strcmp(a, "--quiet")) quiet = 1;
        else usage();
    }
    if (absent >= 0 && timeout < 0) timeout = absent;
    setvbuf(stdout, NULL, _IOLBF, 0);

    // not hci_devid(): it refuses controllers that are down
    char *endp;
    if (strncmp(dev, "hci", 3) != 0) usage();
    int id = (int)strtol(dev + 3, &endp, 10);
    if (endp == dev + 3 || *endp) usage();
    int ctl = socket(AF_BLUETOOTH, SOCK_RAW | SOCK_CLOEXEC, BTPROTO_HCI);
    if (ctl < 0) { perror("observe: AF_BLUETOOTH socket"); return 2; }
    if (setup && ioctl(ctl, HCIDEVUP, id) < 0 && errno != EALREADY) {
        fprintf(stderr, "observe: cannot bring %s up: %s\n", dev, strerror(errno));
        return 2;
    }
    close(ctl);
    dd = hci_open_dev(id);
    if (dd < 0) { fprintf(stderr, "observe: open %s: %s\n", dev, strerror(errno)); return 2; }

    struct hci_filter f;
    hci_filter_clear(&f);
    hci_filter_set_ptype(HCI_EVENT_PKT, &f);
    hci_filter_set_event(EVT_LE_META_EVENT, &f);
    hci_filter_set_event(EVT_CMD_COMPLETE, &f);
    hci_filter_set_event(EVT_CMD_STATUS, &f);
    if (setsockopt(dd, SOL_HCI, HCI_FILTER, &f, sizeof(f)) < 0) {
        perror("observe: HCI_FILTER");
        return 2;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);

    int use_legacy = 0, use_ext = 0;
    if (setup) {
        uint8_t feat[9] = {0};
        int st = le_cmd(0x0003, NULL, 0, feat, sizeof(feat));  // LE Read Local Supported Features
        int has_ext = st == 0 && (feat[2] & 0x10);              // bit 12: LE Extended Advertising
        use_legacy = strcmp(scan, "ext") != 0;
        use_ext = !strcmp(scan, "ext") || (!strcmp(scan, "auto") && has_ext);
        if (use_legacy) {
            // passive, interval = window = 10 ms, public address, accept all
            uint8_t p[7] = {(uint8_t)active, 0x10, 0x00, 0x10, 0x00, 0x00, 0x00};
            // Another observer on this controller (a scenario's background one) may enable
            // scanning again between our disable and the parameters, which are then refused
            // with Command Disallowed: disable and ask again. (A Bluetooth 5 controller's 0x0c
            // can also mean "legacy refused once extended was used": handled below.)
            for (int i = 0; i < 20; i++) {
                legacy_scan(0);
                st = le_cmd(0x000b, p, sizeof(p), NULL, 0);
                if (st != 0x0c || has_ext) break;
                usleep(10000);
            }
            if ((st == 0x0c || st == 0x01) && has_ext && strcmp(scan, "legacy")) {
                fprintf(stderr, "observe: legacy scan refused (0x%02x), extended only\n", st);
                use_legacy = 0;
                use_ext = 1;
            } else if (st != 0) {
                fprintf(stderr, "observe: LE Set Scan Parameters: status %d\n", st);
                return 2;
            }
        }
        if (use_ext) {
            // public address, accept all, 1M PHY: passive, interval 10 ms, window 10 ms
            uint8_t p[8] = {0x00, 0x00, 0x01, (uint8_t)active, 0x10, 0x00, 0x10, 0x00};
            for (int i = 0; i < 20; i++) {  // as above: another observer's scan in between
                ext_scan(0);
                st = le_cmd(0x0041, p, sizeof(p), NULL, 0);
                if (st != 0x0c) break;
                usleep(10000);
            }
            if (st != 0) {
                fprintf(stderr, "observe: LE Set Extended Scan Parameters: status %d\n", st);
                if (!use_legacy) return 2;
                use_ext = 0;
            }
        }
    }

    if (pollms == 0 && use_legacy && use_ext) use_ext = 0;  // one family can stay enabled

    long long start = now_ms(), next_cycle = start;
    last_match = start;
    int armed = 0;  // --poll 0: scanning stays enabled
    uint8_t buf[HCI_MAX_EVENT_SIZE];
    while (!done) {
        long long t = now_ms();
        if (absent >= 0 && t - last_match >= absent) {
            printf("silent %lld\n", t);
            rc = 0;
            break;
        }
        if ((timeout >= 0 && t - start >= timeout) || stop) {
            rc = (count > 0 || absent >= 0) ? 1 : 0;
            break;
        }
        loop_deadline = 0;
        if (timeout >= 0) loop_deadline = start + timeout;
        if (absent >= 0 && (loop_deadline == 0 || last_match + absent < loop_deadline))
            loop_deadline = last_match + absent;
        if (setup && t >= next_cycle && (pollms > 0 || !armed)) {
            // one cycle: each family enabled (reports follow its Command Complete), then disabled;
            // the extended scan stays enabled until the next cycle: BlueZ 5.82's emulator reports
            // no set at extended scan enable but sends each enabled set every interval to the
            // scanners enabled at that moment (5.66 reports at enable). Legacy enable needs it off.
            int gone = 0;
            if (use_legacy && scanning_ext) {
                gone |= ext_scan(0) == -2;
                scanning_ext = 0;  // 0x0C: disabled behind our back
            }
            if (use_legacy && !gone) gone |= cycle(0, pollms > 0) == -2;
            if (use_ext && !done && !gone) gone |= cycle(1, 0) == -2;
            armed = 1;
            if (gone) { fprintf(stderr, "observe: %s is gone\n", dev); rc = 2; break; }
            next_cycle += pollms;
            if (next_cycle < now_ms()) next_cycle = now_ms();
            continue;
        }
        long long wait = 1000;
        if (timeout >= 0 && start + timeout - t < wait) wait = start + timeout - t;
        if (absent >= 0 && last_match + absent - t < wait) wait = last_match + absent - t;
        if (setup && pollms > 0 && next_cycle - t < wait) wait = next_cycle - t;
        if (read_one(buf, sizeof(buf), (int)wait) < 0) {
            fprintf(stderr, "observe: %s: %s\n", dev, strerror(errno));
            rc = 2;
            break;
        }
    }
    loop_deadline = 0;
    if (scanning_legacy) legacy_scan(0);
    if (scanning_ext) ext_scan(0);
    close(dd);
    return rc;
}
