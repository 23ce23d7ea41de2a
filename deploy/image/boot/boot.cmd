# altbeacon A/B boot script (docs/image.md, "Updates"): U-Boot runs it from the FAT (boot.scr,
# made by mkimage). It picks the first slot of BOOT_ORDER with attempts left and a kernel,
# spends one attempt, writes the boot state back, and boots that slot's kernel and initrd with
# the device tree the firmware handed over. The boot state is a U-Boot environment in two 16 KiB
# copies at the start of partition 2 (raw, type 0xda): what RAUC's uboot backend reads and writes
# through fw_printenv/fw_setenv (/etc/fw_env.config: libubootenv's redundant environment). Linux marks a slot good (attempts back to 3) once
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
# The boot state is two copies (issue 49: libubootenv's redundant environment, fw_env.config's two
# lines), each: CRC32 (4 bytes), a flag byte counting its writes, the variables (16 KiB - 5). The
# newest copy whose CRC holds is read; each write goes to the other copy with the flag one more,
# so a write torn by a power cut leaves the copy before it whole. A card flashed before this
# (one copy, no flag byte, at the start) is read as that once and written as two from then on.
# ${tmp}: scratch for the one-copy form U-Boot's env import/export -c handle (CRC, variables).
setexpr sb ${state_addr} + 4000
setexpr tmp ${state_addr} + 8000
setexpr tmpdata ${tmp} + 4
${devtype} read ${state_addr} ${bs_start} 0x40
setenv bs_clear "setenv BOOT_ORDER; setenv BOOT_A_LEFT; setenv BOOT_B_LEFT; setenv ALTBEACON_TRIAL; setenv ALTBEACON_OUTCOME"
# bs_import: the copy at ${c} (two-copy form) imported through ${tmp}; fails on a bad CRC
setenv bs_import 'cp.b ${c} ${tmp} 4; setexpr cd ${c} + 5; cp.b ${cd} ${tmpdata} 3ffb; run bs_clear; env import -c ${tmp} 3fff BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT ALTBEACON_TRIAL ALTBEACON_OUTCOME'
setenv v0 0; setenv v1 0
setenv c ${state_addr}; if run bs_import; then setenv v0 1; fi
setenv c ${sb}; if run bs_import; then setenv v1 1; fi
setexpr fa ${state_addr} + 4; setexpr.b f0 *${fa}
setexpr fb ${sb} + 4; setexpr.b f1 *${fb}
# the current copy: the one valid, or of two the newer, as libubootenv takes it (each write's flag
# is the other's plus one, modulo 256: copy 1 unless its flag is behind copy 0's)
setenv cur
if test ${v0} = 1; then setenv cur 0; fi
if test ${v1} = 1; then
  if test ${v0} = 1; then
    setexpr d ${f1} - ${f0}; setexpr d ${d} "&" ff; setexpr dh ${d} "&" 80
    if test ${dh} = 0; then setenv cur 1; fi
  else setenv cur 1; fi
fi
setenv bs_flag 0
if test -n "${cur}"; then
  if test ${cur} = 0; then setenv c ${state_addr}; setenv bs_flag ${f0}; else setenv c ${sb}; setenv bs_flag ${f1}; fi
  run bs_import
  echo "altbeacon: boot state read (copy ${cur} of 2, write ${bs_flag})"
else
  # the first write goes to copy 1 (a card flashed before keeps its one copy until then)
  setenv cur 0
  run bs_clear
  if env import -c ${state_addr} 4000 BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT ALTBEACON_TRIAL ALTBEACON_OUTCOME; then
    echo "altbeacon: boot state read (one copy, as flashed before two): written as two from now"
  else
    echo "altbeacon: no boot state (a new card): A then B, 3 attempts each"
  fi
fi
# bs_write: the variables into the copy that is not the current one, its flag one more
setenv bs_write 'env export -c -s 3fff ${tmp} BOOT_ORDER BOOT_A_LEFT BOOT_B_LEFT ALTBEACON_TRIAL ALTBEACON_OUTCOME; if test "${cur}" = 0; then setenv c ${sb}; setexpr blk ${bs_start} + 20; setenv cur 1; else setenv c ${state_addr}; setenv blk ${bs_start}; setenv cur 0; fi; setexpr bs_flag ${bs_flag} + 1; setexpr bs_flag ${bs_flag} "&" ff; cp.b ${tmp} ${c} 4; setexpr cf ${c} + 4; mw.b ${cf} ${bs_flag}; setexpr cd ${c} + 5; cp.b ${tmpdata} ${cd} 3ffb; ${devtype} write ${c} ${blk} 0x20'
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
  run bs_write
  reset
fi
run bs_write
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
# altbeacon.bootstate=2: this boot script keeps two copies (Linux's fw_env.config follows it)
setenv bootargs "${fwargs} root=PARTUUID=0a1be4c0-0${rootpart} rauc.slot=${bootslot} altbeacon.bootstate=2"
echo "altbeacon: ${bootargs}"
booti ${kernel_addr_r} ${ramdisk_addr_r}:${initrd_size} ${fdtcontroladdr}
echo "altbeacon: slot ${bootslot} did not boot: reset"
reset
