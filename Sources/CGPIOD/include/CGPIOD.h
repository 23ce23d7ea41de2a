#ifndef ALTBEACOND_CGPIOD_H
#define ALTBEACOND_CGPIOD_H
// A small shim over libgpiod (LGPL-2.1-or-later). libgpiod 1.x (Debian 12, Pi OS bookworm) and
// 2.x (Pi OS trixie) have incompatible APIs; shim.c picks one at compile time. This header does
// not include gpiod.h, so Swift sees the same API with either version.
// Every call that can fail returns NULL or -1 with errno set.
#include <stddef.h>

typedef struct cgpiod_chip cgpiod_chip;
typedef struct cgpiod_line cgpiod_line;

// 1 or 2: the libgpiod API this shim was compiled against.
int cgpiod_api_major(void);

// Opens a chip given as a name ("gpiochip0"), a path ("/dev/gpiochip0") or a label
// ("pinctrl-bcm2711": every /dev/gpiochip* is opened and its label compared).
// errno: ENOENT no such chip; EACCES/EPERM not allowed (also when a chip that might carry the
// label could not be opened); ENODEV/ENOTTY not a GPIO chip.
cgpiod_chip *cgpiod_chip_open(const char *spec);
void cgpiod_chip_close(cgpiod_chip *chip);
const char *cgpiod_chip_path(const cgpiod_chip *chip);   // "/dev/gpiochip0"
const char *cgpiod_chip_label(const cgpiod_chip *chip);  // "pinctrl-bcm2711"
unsigned int cgpiod_chip_num_lines(const cgpiod_chip *chip);

// The offset of the line named `name`, or -1 with errno ENOENT.
long cgpiod_chip_find_line(cgpiod_chip *chip, const char *name);

// Copies the name the device tree gives line `offset` into buf ("" when unnamed). 0, or -1 with errno.
int cgpiod_line_name(cgpiod_chip *chip, unsigned int offset, char *buf, size_t len);

// Copies the consumer holding line `offset` into buf ("" when unused). 0, or -1 with errno.
int cgpiod_line_consumer(cgpiod_chip *chip, unsigned int offset, char *buf, size_t len);

// Requests one line as an output. `value` is logical (1 = active): with active_low the library
// drives the pin low for 1. errno: ERANGE offset out of range; EBUSY held by someone else.
// The chip must stay open while the line is held.
cgpiod_line *cgpiod_line_request_output(cgpiod_chip *chip, unsigned int offset,
                                        const char *consumer, int active_low, int value);
int cgpiod_line_set_value(cgpiod_line *line, int value);
// Gives the line back to the kernel; the pin keeps its last level on most chips.
void cgpiod_line_release(cgpiod_line *line);

#endif
