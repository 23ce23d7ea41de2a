# SPEC §6: edits apply without a restart — by rename (sed -i), in place (cat >), via a temporary
# file and mv — and SIGHUP reloads; each new identity is heard on hci1. Prints edit-to-air times.
. "$TB_REPO/deploy/testbed/daemon-lib.sh"
hexfor() {  # hexfor MAJOR MINOR: the rig payload with another major/minor
  printf '0201061bff1801beac2f234454cf6d4a0fadf2f4911ba9ffa6%04x%04xc500' "$1" "$2"
}
tbd_config
tbd_start
times=""
edit() {  # edit NAME MAJOR: applies an edit with method NAME setting major=MAJOR, waits to hear it
  local name=$1 major=$2 t ms
  t=$(tb_now_ms)
  case "$name" in
    sed) sed -i "s/^major = .*/major = $major/" "$TBD_CONFIG" ;;
    inplace) sed "s/^major = .*/major = $major/" "$TBD_CONFIG" >/tmp/next.toml; cat /tmp/next.toml >"$TBD_CONFIG" ;;
    mv) sed "s/^major = .*/major = $major/" "$TBD_CONFIG" >/tmp/.c.toml.swp; mv /tmp/.c.toml.swp "$TBD_CONFIG" ;;
  esac
  ms=$(tb_wait_heard "$(hexfor "$major" 2)" 5000 "$t") || { tbd_dump; tb_fail "edit by $name (major $major) not heard within 5 s"; }
  times="$times $name=${ms}ms"
}
edit sed 10
edit inplace 11
edit mv 12
# SIGHUP: change the file while the directory watch cannot see it (bind-mount style is overkill);
# simply edit and send SIGHUP at once — the reload must apply either way.
sed -i "s/^minor = .*/minor = 7/" "$TBD_CONFIG"
kill -HUP "$TB_DAEMON_PID"
t=$(tb_now_ms)
ms=$(tb_wait_heard "$(hexfor 12 7)" 5000 "$t") || { tbd_dump; tb_fail "SIGHUP reload not heard"; }
times="$times sighup=${ms}ms"
tbd_alive
tbd_finish
tb_pass "edit-to-air:$times (target ≤ 1000 ms)"
