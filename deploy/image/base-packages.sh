# shellcheck shell=bash
# The image's base root file system (sourced by deploy/build-image and deploy/check-archive):
# Debian trixie arm64, main and non-free-firmware; the kernel (linux-image-arm64) is installed
# after these by a hook. Changing the list rebuilds the cached base.
# shellcheck disable=SC2034 # used by the scripts that source this
packages=(
  systemd systemd-sysv udev kmod e2fsprogs initramfs-tools raspi-firmware bluez-firmware
  # SSH on request only (altbeacon-ssh.service): installed, disabled
  openssh-server
  adduser
  # the public CAs (/etc/ssl/certs/ca-certificates.crt): the monitor's default ca_file with
  # [mqtt] tls = true, for a broker whose certificate comes from a public CA
  ca-certificates
  # the network from the boot partition (network-config, docs/image.md "Network"): off unless
  # configured. netplan's generator (C, no Python) renders netplan YAML for systemd-networkd and
  # wpa_supplicant; iw sets the Wi-Fi country (netplan's regulatory-domain), wireless-regdb is
  # the kernel's table of what each country allows; firmware-brcm80211 (non-free-firmware) is
  # the Pi's Wi-Fi firmware; systemd-resolved answers mDNS (altbeacon-xxxxxx.local) and DNS.
  # libidn2-0 (resolved's recommendation): without it resolved 257 cannot make an mDNS name of
  # the hostname ("Defaulting to hostname 'linux'": dlopen_idn()'s error is taken for the
  # label's length) and answers for linux.local
  wpasupplicant netplan-generator iw wireless-regdb firmware-brcm80211 systemd-resolved libidn2-0
  # A/B updates (docs/image.md "Updates"): Debian's U-Boot for the Pi (the FAT's u-boot.bin),
  # RAUC and its D-Bus service (installs signed bundles into the other slot; its uboot backend), libubootenv's
  # fw_printenv/fw_setenv (the boot state RAUC and the gate read and write)
  u-boot-rpi rauc rauc-service libubootenv-tool
  # the time (docs/image.md "Time"): no Pi has a real-time clock. systemd-timesyncd (Debian's SNTP
  # client) sets it from NTP once a network is up (servers from DHCP where given, else Debian's
  # pool), keeps the last known time on the state partition and restores it at each boot
  systemd-timesyncd
)
