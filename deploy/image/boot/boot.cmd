# altbeacon A/B boot script (docs/image.md, "Updates"): U-Boot runs it from the FAT (boot.scr,
# made by mkimage). It picks the first slot of BOOT_ORDER with attempts left and a kernel,
# spends one attempt, writes the boot state back, and boots that slot's kernel and initrd with
# the device tree the firmware handed over. The boot state is a 16 KiB U-Boot environment at
# the start of partition 2 (raw, type 0xda): what RAUC's uboot backend reads and writes through
# fw_printenv/fw_setenv (/etc/fw_env.config). Linux marks a slot good (attempts back to 3) once
# its beacon is on air (altbeacon-update-gate); a slot whose attempts are spent is skipped.
echo "altbeacon: boot.scr on ${devtype} ${devnum}"
if test -z "${devtype}"; then setenv devtype mmc; fi
if test -z "${devnum}"; then setenv devnum 0; fi
${devtype} dev ${devnum}
part start ${devtype} ${devnum} 2 bs_start
# addresses clear of a 40 MiB kernel (booti moves it to a 2 MiB boundary), its gzip'd copy and a
# 40 MiB initrd, on a 512 MiB Zero 2 W and on qemu's virt (RAM from 1 GiB)
if test "${board}" = "rpi"; then
  setenv state_addr 0x05000000; setenv kernel_addr_r 0x00080000; setenv ramdisk_addr_r 0x06000000
  setenv kernel_comp_addr_r 0x0c000000
else
  setenv state_addr 0x4a000000; setenv kernel_addr_r 0x40400000; setenv ramdisk_addr_r 0x44000000
  setenv kernel_comp_addr_r 0x4c000000
fi
setenv kernel_comp_size 0x02000000
setenv BOOT_ORDER; setenv BOOT_A_LEFT; setenv BOOT_B_LEFT; setenv ALTBEACON_TRIAL; setenv ALTBEACON_OUTCOME
${devtype} read ${state_addr} ${bs_start} 0x20
if env import -c ${state_addr} 0x4000 BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT ALTBEACON_TRIAL ALTBEACON_OUTCOME; then
  echo "altbeacon: boot state read"
else
  echo "altbeacon: no boot state (a new card): A then B, 3 attempts each"
fi
if test -z "${BOOT_ORDER}"; then setenv BOOT_ORDER "A B"; fi
if test -z "${BOOT_A_LEFT}"; then setenv BOOT_A_LEFT 3; fi
if test -z "${BOOT_B_LEFT}"; then setenv BOOT_B_LEFT 3; fi
setenv bootslot
for s in ${BOOT_ORDER}; do
  if test -z "${bootslot}"; then
    if test "${s}" = "A"; then setenv p 5; setenv left ${BOOT_A_LEFT}; fi
    if test "${s}" = "B"; then setenv p 6; setenv left ${BOOT_B_LEFT}; fi
    if test -n "${left}" && test ${left} -gt 0 && test -e ${devtype} ${devnum}:${p} /boot/altbeacon/Image.gz; then
      setenv bootslot ${s}; setenv rootpart ${p}
      setexpr left ${left} - 1
      if test "${s}" = "A"; then setenv BOOT_A_LEFT ${left}; else setenv BOOT_B_LEFT ${left}; fi
    fi
    setenv left
  fi
done
if test -z "${bootslot}"; then
  # every slot spent: start over (a card never gives up; the gate reboots only a slot on trial)
  echo "altbeacon: no slot has attempts left: both back to 3, reset"
  setenv BOOT_A_LEFT 3; setenv BOOT_B_LEFT 3
  env export -c -s 0x4000 ${state_addr} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT ALTBEACON_TRIAL ALTBEACON_OUTCOME
  ${devtype} write ${state_addr} ${bs_start} 0x20
  reset
fi
env export -c -s 0x4000 ${state_addr} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT ALTBEACON_TRIAL ALTBEACON_OUTCOME
${devtype} write ${state_addr} ${bs_start} 0x20
echo "altbeacon: slot ${bootslot} (partition ${rootpart}; attempts left: A ${BOOT_A_LEFT}, B ${BOOT_B_LEFT})"
# the firmware's command line (cmdline.txt, in the device tree's /chosen) and the slot's root
fdt addr ${fdtcontroladdr}
setenv fwargs
fdt get value fwargs /chosen bootargs
# The board's serial number is the firmware's /serial-number (the card's hostname and machine-id
# come from it): booti stamps U-Boot's serial# over it, so serial# is made the firmware's (on a
# Pi they are the same; qemu's mailbox answers 0 where its device tree carries a serial).
if fdt get value dtserial / serial-number; then env set -f serial# "${dtserial}"; fi
load ${devtype} ${devnum}:${rootpart} ${ramdisk_addr_r} /boot/altbeacon/initrd.img
setenv initrd_size ${filesize}
load ${devtype} ${devnum}:${rootpart} ${kernel_addr_r} /boot/altbeacon/Image.gz
setenv bootargs "${fwargs} root=PARTUUID=0a1be4c0-0${rootpart} rauc.slot=${bootslot}"
echo "altbeacon: ${bootargs}"
booti ${kernel_addr_r} ${ramdisk_addr_r}:${initrd_size} ${fdtcontroladdr}
echo "altbeacon: slot ${bootslot} did not boot: reset"
reset
