#!/bin/sh
# Run by systemd.run= (deploy/image/test-image): the run generator boots into
# kernel-command-line.target instead of multi-user.target, so start the real target (altbeacond
# and the image's other units), then the probe named on the command line as a service of its own.
systemctl start --no-block multi-user.target
exec systemd-run --no-block --unit=abtest /bin/sh "/boot/firmware/abtest/$1.sh"
