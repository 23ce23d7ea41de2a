#include "CGPIOD.h"
#include <gpiod.h>
int cgpiod_api_major(void) { return 1; }
