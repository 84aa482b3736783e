#!/bin/sh
# Boots systemd 252 as PID 1 on a throw-away copy of the host's root, so that a test can install
# Waymark for real (dpkg -i of the .deb, Scripts/install.sh without --destdir): the maintainer
# scripts, systemd-sysusers, systemctl enable and the started unit all run, and the host keeps
# nothing of it. Used by Tests/WaymarkDaemonTests/DebianPackageTests.swift; needs root. Start it
# as (from a process in an empty cgroup2 group, as for Scripts/systemd-namespace-boot.sh):
#
#   unshare --fork --pid --mount --net --uts --cgroup --propagation private \
#     Scripts/overlay-systemd-boot.sh <work dir> <payload dir>
#
# The new root is an overlayfs: the host's root file system below, a tmpfs above that takes
# every write (the dpkg database, /etc, /usr); it goes when the namespace ends. <payload dir>
# appears as /payload. /run, /tmp and /var/tmp are fresh tmpfs mounts; /proc is the namespace's
# own; /sys and /dev are the host's (udevd does not run, so nothing triggers devices); the
# host's /var/lib/waymark, /etc/waymark and /usr/sbin/policy-rc.d are deleted. As in
# systemd-namespace-boot.sh, systemd sees no unit of the host: /lib/systemd/system is a tmpfs
# with a few empty targets (the package adds its unit there) and /etc/systemd/system is empty.
set -eu
PATH=/usr/sbin:/usr/bin:/sbin:/bin
export PATH
work="$1"
payload="$2"

mkdir -p "$work/layers"
mount -t tmpfs tmpfs "$work/layers"
mkdir "$work/layers/upper" "$work/layers/work" "$work/layers/root"
new="$work/layers/root"
mount -t overlay overlay \
  -o "lowerdir=/,upperdir=$work/layers/upper,workdir=$work/layers/work" "$new"
mount -t proc proc "$new/proc"
mount --rbind /dev "$new/dev"
mount --rbind /sys "$new/sys"
umount -l "$new/sys/fs/cgroup"
mount -t cgroup2 cgroup2 "$new/sys/fs/cgroup"
for directory in run tmp var/tmp; do
  mount -t tmpfs tmpfs "$new/$directory"
done
mkdir -p "$new/payload"
mount --bind "$payload" "$new/payload"

# A machine without Waymark: none of the host's state, and no policy-rc.d (Docker images have
# one that forbids starting services).
rm -rf "$new/var/lib/waymark" "$new/etc/waymark" "$new/usr/sbin/policy-rc.d"

mount -t tmpfs tmpfs "$new/usr/lib/systemd/system"
rm -rf "$new/etc/systemd/system"
mkdir -p "$new/etc/systemd/system"
for target in sysinit basic shutdown network multi-user; do
  printf '[Unit]\nDescription=%s (empty, for the test)\n' "$target" \
    > "$new/usr/lib/systemd/system/$target.target"
done
printf '[Unit]\nDescription=Waymark installation test boot\n' \
  > "$new/etc/systemd/system/waymark-test.target"

cd "$new"
mkdir -p old-root
pivot_root . old-root
umount -l /old-root
rmdir /old-root
export container=waymark-test
exec /lib/systemd/systemd --system --unit=waymark-test.target --log-target=console \
  --log-level=info --show-status=no
