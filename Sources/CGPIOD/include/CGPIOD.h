#ifndef ALTBEACOND_CGPIOD_H
#define ALTBEACOND_CGPIOD_H
// Placeholder until the LED work (issue 5) lands the v1/v2 shim.
int cgpiod_api_major(void);
#endif
