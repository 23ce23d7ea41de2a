// libgpiod 1.x / 2.x shim. The version is taken from the gpiod.h found first on the include path
// (1.x defines GPIOD_LINE_BULK_MAX_LINES, 2.x does not); -DALTBEACOND_GPIOD_V2 demands 2.x and
// fails the build if the 1.x header is found instead, so a wrong -I can never go unnoticed.
#define _GNU_SOURCE
#include "CGPIOD.h"
#include <dirent.h>
#include <errno.h>
#include <gpiod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifdef GPIOD_LINE_BULK_MAX_LINES
#define CGPIOD_V1 1
#ifdef ALTBEACOND_GPIOD_V2
#error "ALTBEACOND_GPIOD_V2 is set but the gpiod.h found is libgpiod 1.x: put the 2.x include directory first (-Xcc -I<prefix>/usr/include)"
#endif
#else
#define CGPIOD_V1 0
#endif

struct cgpiod_chip {
    struct gpiod_chip *chip;
    char path[64];
    char label[64];
    unsigned int num_lines;
};

struct cgpiod_line {
#if CGPIOD_V1
    struct gpiod_line *line;
#else
    struct gpiod_line_request *request;
#endif
    unsigned int offset;
};

int cgpiod_api_major(void) { return CGPIOD_V1 ? 1 : 2; }

// --- version-specific primitives -----------------------------------------------------------------

// Opens the chip at path and fills in label and line count.
static int open_path(cgpiod_chip *c, const char *path) {
    snprintf(c->path, sizeof c->path, "%s", path);
    c->chip = gpiod_chip_open(path);
    if (!c->chip) return -1;
#if CGPIOD_V1
    snprintf(c->label, sizeof c->label, "%s", gpiod_chip_label(c->chip));
    c->num_lines = gpiod_chip_num_lines(c->chip);
#else
    struct gpiod_chip_info *info = gpiod_chip_get_info(c->chip);
    if (!info) {
        int e = errno;
        gpiod_chip_close(c->chip);
        c->chip = NULL;
        errno = e;
        return -1;
    }
    snprintf(c->label, sizeof c->label, "%s", gpiod_chip_info_get_label(info));
    c->num_lines = (unsigned int)gpiod_chip_info_get_num_lines(info);
    gpiod_chip_info_free(info);
#endif
    return 0;
}

long cgpiod_chip_find_line(cgpiod_chip *c, const char *name) {
#if CGPIOD_V1
    // gpiod_chip_find_line sets errno ENOENT when no line has that name
    struct gpiod_line *line = gpiod_chip_find_line(c->chip, name);
    if (!line) return -1;
    return (long)gpiod_line_offset(line);
#else
    int off = gpiod_chip_get_line_offset_from_name(c->chip, name);
    return off < 0 ? -1 : (long)off;
#endif
}

// Copies a text of line `offset` into buf: its name, or (consumer) who holds it ("" when unused).
static int line_text(cgpiod_chip *c, unsigned int offset, char *buf, size_t len, int consumer) {
    if (len == 0) { errno = EINVAL; return -1; }
    buf[0] = '\0';
    if (offset >= c->num_lines) { errno = ERANGE; return -1; }
#if CGPIOD_V1
    struct gpiod_line *line = gpiod_chip_get_line(c->chip, offset);
    if (!line || gpiod_line_update(line) < 0) return -1;
    const char *text = !consumer ? gpiod_line_name(line)
                     : gpiod_line_is_used(line) ? gpiod_line_consumer(line) : NULL;
    if (text) snprintf(buf, len, "%s", text);
#else
    struct gpiod_line_info *info = gpiod_chip_get_line_info(c->chip, offset);
    if (!info) return -1;
    const char *text = !consumer ? gpiod_line_info_get_name(info)
                     : gpiod_line_info_is_used(info) ? gpiod_line_info_get_consumer(info) : NULL;
    if (text) snprintf(buf, len, "%s", text);
    gpiod_line_info_free(info);
#endif
    return 0;
}

int cgpiod_line_name(cgpiod_chip *c, unsigned int offset, char *buf, size_t len) {
    return line_text(c, offset, buf, len, 0);
}

int cgpiod_line_consumer(cgpiod_chip *c, unsigned int offset, char *buf, size_t len) {
    return line_text(c, offset, buf, len, 1);
}

cgpiod_line *cgpiod_line_request_output(cgpiod_chip *c, unsigned int offset,
                                        const char *consumer, int active_low, int value) {
    if (offset >= c->num_lines) { errno = ERANGE; return NULL; }
    cgpiod_line *l = calloc(1, sizeof *l);
    if (!l) return NULL;
    l->offset = offset;
    int e = 0;
#if CGPIOD_V1
    l->line = gpiod_chip_get_line(c->chip, offset);
    int flags = active_low ? GPIOD_LINE_REQUEST_FLAG_ACTIVE_LOW : 0;
    if (l->line && gpiod_line_request_output_flags(l->line, consumer, flags, value ? 1 : 0) == 0)
        return l;
    e = errno;
#else
    struct gpiod_line_settings *s = gpiod_line_settings_new();
    struct gpiod_line_config *lc = gpiod_line_config_new();
    struct gpiod_request_config *rc = gpiod_request_config_new();
    if (s && lc && rc &&
        gpiod_line_settings_set_direction(s, GPIOD_LINE_DIRECTION_OUTPUT) == 0 &&
        gpiod_line_settings_set_output_value(
            s, value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE) == 0) {
        gpiod_line_settings_set_active_low(s, active_low != 0);
        gpiod_request_config_set_consumer(rc, consumer);
        if (gpiod_line_config_add_line_settings(lc, &offset, 1, s) == 0)
            l->request = gpiod_chip_request_lines(c->chip, rc, lc);
    }
    e = errno;
    gpiod_request_config_free(rc);
    gpiod_line_config_free(lc);
    gpiod_line_settings_free(s);
    if (l->request) return l;
#endif
    free(l);
    errno = e ? e : EIO;
    return NULL;
}

int cgpiod_line_set_value(cgpiod_line *l, int value) {
#if CGPIOD_V1
    return gpiod_line_set_value(l->line, value ? 1 : 0);
#else
    return gpiod_line_request_set_value(l->request, l->offset,
                                        value ? GPIOD_LINE_VALUE_ACTIVE : GPIOD_LINE_VALUE_INACTIVE);
#endif
}

void cgpiod_line_release(cgpiod_line *l) {
    if (!l) return;
#if CGPIOD_V1
    gpiod_line_release(l->line);
#else
    gpiod_line_request_release(l->request);
#endif
    free(l);
}

void cgpiod_chip_close(cgpiod_chip *c) {
    if (!c) return;
    if (c->chip) gpiod_chip_close(c->chip);
    free(c);
}

// --- common: name, path or label -----------------------------------------------------------------

const char *cgpiod_chip_path(const cgpiod_chip *c) { return c->path; }
const char *cgpiod_chip_label(const cgpiod_chip *c) { return c->label; }
unsigned int cgpiod_chip_num_lines(const cgpiod_chip *c) { return c->num_lines; }

// Finds the chip whose label is `label` among /dev/gpiochip*.
static int open_label(cgpiod_chip *c, const char *label) {
    DIR *d = opendir("/dev");
    if (!d) return -1;
    int denied = 0;
    struct dirent *ent;
    while ((ent = readdir(d))) {
        if (strncmp(ent->d_name, "gpiochip", 8) != 0) continue;
        char path[64];
        snprintf(path, sizeof path, "/dev/%s", ent->d_name);
        if (open_path(c, path) < 0) {
            if (errno == EACCES || errno == EPERM) denied = errno;
            continue;
        }
        if (strcmp(c->label, label) == 0) { closedir(d); return 0; }
        gpiod_chip_close(c->chip);
        c->chip = NULL;
    }
    closedir(d);
    // a chip we were not allowed to open may be the one: say so rather than "no chip"
    errno = denied ? denied : ENOENT;
    return -1;
}

cgpiod_chip *cgpiod_chip_open(const char *spec) {
    if (!spec || !*spec || strlen(spec) > 48) { errno = ENOENT; return NULL; }
    cgpiod_chip *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    int r;
    if (spec[0] == '/') {
        r = open_path(c, spec);
    } else {
        char path[64];
        struct stat st;
        snprintf(path, sizeof path, "/dev/%s", spec);
        if (strchr(spec, '/') == NULL && stat(path, &st) == 0)
            r = open_path(c, path);
        else
            r = open_label(c, spec);
    }
    if (r < 0) {
        int e = errno;
        free(c);
        errno = e;
        return NULL;
    }
    return c;
}
