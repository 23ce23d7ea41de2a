#ifndef ALTBEACOND_CLINUX_H
#define ALTBEACOND_CLINUX_H
// Linux headers that Swift's Glibc module does not bring in.
#include <sys/signalfd.h>
#include <sys/inotify.h>
#include <sys/prctl.h>
#include <linux/capability.h>
#include <linux/rfkill.h>
#endif
