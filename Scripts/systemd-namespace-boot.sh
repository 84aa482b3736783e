#!/bin/sh
# Boots systemd 252 as PID 1 in private namespaces to run the real waymarkd.service.
# Used by Tests/WaymarkDaemonTests/SystemdBootTests.swift; needs root. Start it as:
#
#   unshare --fork --pid --mount --mount-proc --net --uts --ipc --cgroup --propagation private \
#     Scripts/systemd-namespace-boot.sh <work dir> <waymarkd binary> <unit file> <sysusers file> \
#       [<exclusive unit> <exclusive nft rules>]
#
# The unit's privilege-separated helper comes along: waymark-identify (next to the waymarkd
# binary) in /usr/local/bin, and waymark-identify.socket and waymark-identify@.service from the
# unit's directory. So does the CLI: waymark (next to the waymarkd binary) in /usr/local/bin, for
# the test's clients and grants: the checkout may be where the boot's users cannot reach (under
# /tmp, which the boot replaces, or below a directory only root may enter).
# With the last two, the exclusive profile is booted too (docs/guide/desktop.md, "Exclusive profile"): the
# loopback interface of the private network namespace is brought up, waymark-exclusive.service
# loads the nftables rules, a gpsd.service (gpsd without a device on 127.0.0.1:2947 and ::1,
# with the profile's drop-in) is started after it, and waymarkd checks its grant every second.
#
# (from a process already moved into an empty cgroup2 group, so that the cgroup namespace
# gives systemd a tree of its own). Nothing on the host is changed: /run, /tmp, /var/tmp,
# /var/lib (StateDirectory=) and the unit directory are fresh tmpfs mounts, /etc is a copy,
# and systemd sees no unit files but the unit under test and the few targets it depends on
# (no tmpfiles, no journald, no udevd: the host's sysinit units never run; an earlier version
# that let them run had systemd-tmpfiles empty the host's /tmp).
set -eu
work="$1"
binary="$2"
unit="$3"
sysusers="$4"
exclusive_unit="${5:-}"
exclusive_rules="${6:-}"

mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /var/tmp
mount -t tmpfs tmpfs /var/lib
cp -a /etc "$work/etc"
cp "$binary" "$work/waymarkd"
cp "$sysusers" "$work/sysusers.conf"
mount --bind "$work/etc" /etc
# Everything below edits the copy only.
[ "$(stat -c %d:%i /etc)" = "$(stat -c %d:%i "$work/etc")" ] || { echo "no /etc copy" >&2; exit 1; }
mount -t tmpfs tmpfs /usr/local/bin
cp "$work/waymarkd" /usr/local/bin/waymarkd
cp "$(dirname "$binary")/waymark-identify" /usr/local/bin/waymark-identify
cp "$(dirname "$binary")/waymark" /usr/local/bin/waymark

# Only our units: the host's sysinit.target and friends must never run here.
mount -t tmpfs tmpfs /usr/lib/systemd/system
rm -rf /etc/systemd/system
mkdir -p /etc/systemd/system/waymarkd.service.d /etc/waymark
cp "$unit" /etc/systemd/system/waymarkd.service
units="$(dirname "$unit")"
cp "$units/waymark-identify.socket" /etc/systemd/system/
# /usr/local/libexec may not exist on the host: the helper sits in the tmpfs /usr/local/bin.
sed 's#/usr/local/libexec/waymark/waymark-identify#/usr/local/bin/waymark-identify#' \
  "$units/waymark-identify@.service" > /etc/systemd/system/waymark-identify@.service
for target in sysinit basic shutdown network multi-user; do
  printf '[Unit]\nDescription=%s (empty, for the test)\n' "$target" \
    > "/usr/lib/systemd/system/$target.target"
done
cat > /etc/systemd/system/waymark-test.target <<'EOT'
[Unit]
Description=Waymark test boot
Wants=waymarkd.service
EOT
# A short watchdog for the test, and the log on systemd's console (there is no journald).
cat > /etc/systemd/system/waymarkd.service.d/test.conf <<'EOT'
[Service]
WatchdogSec=2s
RestartSec=500ms
StandardOutput=inherit
StandardError=inherit
EOT
printf 'gpsd = 127.0.0.1:2947\nauthorization-check = 3600\n' > /etc/waymark/waymark.conf
# Built for code coverage (Scripts/test.sh), a program started by systemd would write its
# profile as default.profraw into its working directory, the host's /: it goes nowhere.
mkdir -p /etc/systemd/system.conf.d
printf '[Manager]\nDefaultEnvironment=LLVM_PROFILE_FILE=/dev/null\n' \
  > /etc/systemd/system.conf.d/zz-waymark-test.conf
if [ -n "$exclusive_unit" ]; then
  ip link set lo up
  cp "$exclusive_unit" /etc/systemd/system/waymark-exclusive.service
  cp "$exclusive_rules" /etc/waymark/exclusive.nft
  # The profile's drop-in for gpsd (Requires= the profile, PrivateIPC=yes), from beside the unit.
  mkdir -p /etc/systemd/system/gpsd.service.d
  cp "$(dirname "$exclusive_unit")/waymark-exclusive-gpsd.conf" \
    /etc/systemd/system/gpsd.service.d/waymark-exclusive.conf
  cat > /etc/systemd/system/gpsd.service <<'EOT'
[Unit]
Description=gpsd without a device (for the test)
[Service]
ExecStart=/usr/sbin/gpsd -N -n -S 2947 -F /run/gpsd-test.sock
EOT
  printf 'Wants=waymark-exclusive.service gpsd.service\n' >> /etc/systemd/system/waymark-test.target
  printf 'gpsd = 127.0.0.1:2947\nauthorization-check = 1\n' > /etc/waymark/waymark.conf
fi

systemd-sysusers "$work/sysusers.conf"
mount -t tmpfs tmpfs /tmp
umount -l /sys/fs/cgroup
mount -t cgroup2 cgroup2 /sys/fs/cgroup
export container=waymark-test
exec /lib/systemd/systemd --system --unit=waymark-test.target --log-target=console \
  --log-level=info --show-status=no
