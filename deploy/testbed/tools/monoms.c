// monoms: prints CLOCK_MONOTONIC in milliseconds (the clock the observer stamps reports with).
#include <stdio.h>
#include <time.h>

int main(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    printf("%lld\n", (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
    return 0;
}
