#!/bin/sh
# Run by systemd.run= (deploy/image/test-image): the probe named on the command line, as a
# service of its own. The run generator boots into kernel-command-line.target; the image's own
# kernel-command-line.target.d brings multi-user.target (altbeacond) in, as it must for a card
# Raspberry Pi Imager has customised (its firstrun.sh form): nothing here starts it.
exec systemd-run --no-block --unit=abtest /bin/sh "/boot/firmware/abtest/$1.sh"
