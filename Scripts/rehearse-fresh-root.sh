#!/usr/bin/env bash
# Runs the README's two commands (Scripts/demo.sh, then Scripts/test.sh) in a Debian 12 root made
# new for the run, so that nothing an earlier run left on this machine (a user, a group, a
# package, a file in /etc) can hide a missing install step. Needs root, debootstrap and
# unshare and pivot_root; run it before saying that the test command passes on a fresh machine.
#
#   Scripts/rehearse-fresh-root.sh [work dir]     (default: .build/fresh-root)
#
# The root gets what this project's machine image has before any project step (the Swift
# toolchain, bind-mounted read-only from the host's /opt/swift, and the Debian packages it needs:
# a compiler, git, python3); everything else is the README's commands' to install. The checkout
# is a clone of the committed HEAD (uncommitted changes are not rehearsed), made under a path
# with a space in it, as a newcomer's might be. The run is in its own mount and PID namespaces
# (its mounts vanish with it); /run is a tmpfs and /tmp a directory of the root, as on a Debian
# 12 machine; the network is the host's, for apt. The output of each command is
# kept in <work dir>/demo.log and <work dir>/test.log; the exit status is the first non-zero one.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="${1:-$repo/.build/fresh-root}"
[ "$(id -u)" -eq 0 ] || { echo "rehearse-fresh-root.sh: needs root" >&2; exit 2; }
for tool in debootstrap unshare pivot_root git; do
  command -v "$tool" >/dev/null || { echo "rehearse-fresh-root.sh: needs $tool" >&2; exit 2; }
done
toolchain="$(dirname "$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")")"
[ -x "$toolchain/usr/bin/swift" ] || { echo "no Swift toolchain at $toolchain" >&2; exit 2; }

# The mirror this machine's apt already uses (the first deb URI of its sources).
mirror="$( (cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null || true) \
  | grep -oE '^(URIs:|deb) +[^ ]+' | awk '{print $2}' | grep -v security | head -n 1 || true)"
[ -n "$mirror" ] || { echo "no Debian mirror in /etc/apt/sources" >&2; exit 2; }

# What the machine image has before the project's commands run: the toolchain's own needs.
image=(ca-certificates git gcc g++ libc6-dev libstdc++-12-dev libgcc-12-dev binutils
  libcurl4 libxml2 libedit2 libncurses6 libpython3.11 libz3-4 libicu72 uuid-dev tzdata
  python3 procps unzip)

root="$work/root"
if [ -e "$root" ]; then
  echo "== removing the previous root ($root)"
  rm -rf --one-file-system "$root"
fi
mkdir -p "$work"
echo "== debootstrap bookworm into $root (from $mirror)"
debootstrap --variant=minbase --include="$(IFS=,; echo "${image[*]}")" bookworm "$root" \
  "$mirror" > "$work/debootstrap.log" 2>&1 \
  || { tail -n 30 "$work/debootstrap.log"; exit 1; }
cp /etc/apt/sources.list.d/*.sources "$root/etc/apt/sources.list.d/" 2>/dev/null || true
cp /etc/resolv.conf "$root/etc/resolv.conf"
# A booted Debian machine has a machine id (systemd's first boot writes one); a debootstrap
# root has none.
od -An -N16 -tx1 /dev/urandom | tr -d ' \n' > "$root/etc/machine-id"
echo >> "$root/etc/machine-id"
checkout="/root/a fresh clone/waymark"
mkdir -p "$root$(dirname "$checkout")" "$root/opt/swift"
git clone --quiet --no-hardlinks "$repo" "$root$checkout"
echo "== the clone is at $(git -C "$root$checkout" log -1 --format='%h %s' | cut -c1-90)"

# Inside: the mounts a booted machine has, the new root made the root by pivot_root (not
# chroot: systemd refuses to run as PID 1 in a chroot, and the tests boot it), then the two
# commands as a newcomer types them. Their output goes to files in the new root, copied out
# after.
inner=$(cat <<'EOT'
set -u
mount --rbind "$ROOT" "$ROOT"
mount --make-rprivate "$ROOT"
mount -t proc proc "$ROOT/proc"
mount -t sysfs sysfs "$ROOT/sys"
mount -t cgroup2 cgroup2 "$ROOT/sys/fs/cgroup"
mount --rbind /dev "$ROOT/dev"
mount -t tmpfs tmpfs "$ROOT/run"
mount --bind -o ro "$TOOLCHAIN" "$ROOT/opt/swift"
mount -o remount,bind,ro "$ROOT/opt/swift"
cd "$ROOT"
mkdir -p .old-root
pivot_root . .old-root
cd /
umount -l /.old-root
rmdir /.old-root
run() {
  /usr/bin/env -i HOME=/root TERM=dumb LANG=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:/opt/swift/usr/bin \
    /bin/bash -c "cd \"$CHECKOUT\" && $1"
}
status=0
run Scripts/demo.sh > /root/rehearsal-demo.log 2>&1 || status=$?
echo "$status" > /root/rehearsal-demo.status
test_status=0
run Scripts/test.sh > /root/rehearsal-test.log 2>&1 || test_status=$?
echo "$test_status" > /root/rehearsal-test.status
((status != 0)) || status=$test_status
exit "$status"
EOT
)
echo "== Scripts/demo.sh, then Scripts/test.sh (logs: $work/demo.log, $work/test.log)"
status=0
ROOT="$root" TOOLCHAIN="$toolchain" CHECKOUT="$checkout" \
  unshare --mount --pid --fork --propagation private /bin/bash -c "$inner" || status=$?
cp "$root/root/rehearsal-demo.log" "$work/demo.log" 2>/dev/null || true
cp "$root/root/rehearsal-test.log" "$work/test.log" 2>/dev/null || true
echo "== Scripts/demo.sh exited $(cat "$root/root/rehearsal-demo.status" 2>/dev/null || echo '?')"
tail -n 12 "$work/demo.log" 2>/dev/null || true
echo "== Scripts/test.sh exited $(cat "$root/root/rehearsal-test.status" 2>/dev/null || echo '?')"
grep -E '^✘ Test .* failed after|Test run with' "$work/test.log" 2>/dev/null | tail -n 40 || true
sed -n '/== skipped tests/,$p' "$work/test.log" 2>/dev/null | head -n 80
exit "$status"
