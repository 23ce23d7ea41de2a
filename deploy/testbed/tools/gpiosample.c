// gpiosample: samples a gpio-sim line level (sysfs sim_gpioN/value) and classifies it.
//
// usage: gpiosample FILE DURATION_MS [INTERVAL_MS] [--raw]
// Prints one line: "on", "off", or "blink <Hz> <duty%>" where Hz is the mean frequency of rising
// edges (1 decimal) and duty the share of samples at level 1 (whole percent). A line that is high
// for all but one sample-long glitch still counts as blinking: the classification is exact.
// --raw also prints "<ms> <level>" for every sample before the verdict (ms from the start).
// Exit 0, or 2 when the file cannot be read.
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static int level(const char *path) {
    char b[8];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t n = read(fd, b, sizeof(b));
    close(fd);
    if (n <= 0) return -1;
    return b[0] == '1';
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: gpiosample FILE DURATION_MS [INTERVAL_MS] [--raw]\n");
        return 2;
    }
    const char *path = argv[1];
    long long dur = atoll(argv[2]) * 1000, iv = 20000;
    int raw = 0;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--raw")) raw = 1;
        else iv = atoll(argv[i]) * 1000;
    }
    if (iv <= 0) iv = 20000;
    long long start = now_us(), next = start;
    long samples = 0, high = 0, rises = 0;
    long long first_rise = -1, last_rise = -1;
    int prev = -1;
    for (;;) {
        long long t = now_us();
        if (t - start >= dur && samples > 0) break;
        int v = level(path);
        if (v < 0) { perror(path); return 2; }
        if (raw) printf("%lld %d\n", (t - start) / 1000, v);
        samples++;
        high += v;
        if (prev == 0 && v == 1) {
            rises++;
            if (first_rise < 0) first_rise = t;
            last_rise = t;
        }
        prev = v;
        next += iv;
        long long s = next - now_us();
        if (s > 0) {
            struct timespec ts = {s / 1000000, (s % 1000000) * 1000};
            nanosleep(&ts, NULL);
        } else {
            next = now_us();  // fell behind (slow guest): do not burst
        }
    }
    if (high == samples) { printf("on\n"); return 0; }
    if (high == 0) { printf("off\n"); return 0; }
    double hz;
    if (rises >= 2) hz = (rises - 1) * 1e6 / (double)(last_rise - first_rise);
    else hz = rises * 1e6 / (double)dur;
    // a single falling edge without a rise (e.g. on then off) still shows as blink 0.0
    printf("blink %.1f %ld\n", hz, (high * 100 + samples / 2) / samples);
    return 0;
}
