#!/usr/bin/env bash
# Installs waymark and waymarkd with their systemd unit, sysusers.d entry, udev rule and default
# configuration. Run from the package root after `swift build -c release --static-swift-stdlib`.
#
#   Scripts/install.sh [--destdir <dir>] [--prefix /usr/local] [--build-dir .build/release]
#                      [--exclusive]
#
# With --destdir (packaging, tests) files go under <dir> and nothing on the running system is
# touched. Without it (needs root), systemd and udev are reloaded when available.
# --exclusive also installs the exclusive profile (an nftables rule: gpsd's client port answers
# waymarkd and root only) and enables it; undo: systemctl disable --now waymark-exclusive.
set -euo pipefail
destdir=""
prefix="/usr/local"
build=".build/release"
exclusive=0
while (($#)); do
  case "$1" in
    --destdir) destdir="${2:?--destdir needs a directory}"; shift 2 ;;
    --destdir=*) destdir="${1#*=}"; shift ;;
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#*=}"; shift ;;
    --build-dir) build="${2:?--build-dir needs a directory}"; shift 2 ;;
    --build-dir=*) build="${1#*=}"; shift ;;
    --exclusive) exclusive=1; shift ;;
    -h|--help) sed -n '2,11s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "Error: unknown argument '$1'" >&2; exit 64 ;;
  esac
done
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
for binary in waymark waymarkd; do
  [ -x "$build/$binary" ] || { echo "Error: $build/$binary missing; run swift build -c release" >&2; exit 66; }
done

if command -v ldd >/dev/null && ldd "$build/waymarkd" 2>/dev/null | grep -q 'libswiftCore\.so'; then
  echo "note: $build/waymarkd uses the shared Swift runtime; build with" \
    "'swift build -c release --static-swift-stdlib' for a self-contained daemon with the" \
    "smallest memory footprint (README, Install)" >&2
fi

install -d "$destdir$prefix/bin" "$destdir/etc/systemd/system" "$destdir/etc/udev/rules.d" \
  "$destdir/etc/waymark" "$destdir/usr/lib/sysusers.d" "$destdir$prefix/share/doc/waymark"
install -m 0755 "$build/waymark" "$build/waymarkd" "$destdir$prefix/bin/"
sed "s#/usr/local/bin/waymarkd#$prefix/bin/waymarkd#; s#/usr/local/share/doc#$prefix/share/doc#" \
  systemd/waymarkd.service > "$destdir/etc/systemd/system/waymarkd.service"
chmod 0644 "$destdir/etc/systemd/system/waymarkd.service"
install -m 0644 systemd/waymark.sysusers "$destdir/usr/lib/sysusers.d/waymark.conf"
install -m 0644 udev/61-waymark.rules "$destdir/etc/udev/rules.d/61-waymark.rules"
install -m 0644 README.md "$destdir$prefix/share/doc/waymark/README.md"
# Never overwrite a configuration someone has edited.
if [ ! -e "$destdir/etc/waymark/waymark.conf" ]; then
  install -m 0644 config/waymark.conf "$destdir/etc/waymark/waymark.conf"
fi

if ((exclusive)); then
  install -m 0644 systemd/waymark-exclusive.nft "$destdir/etc/waymark/exclusive.nft"
  install -m 0644 systemd/waymark-exclusive.service \
    "$destdir/etc/systemd/system/waymark-exclusive.service"
  if [ -z "$destdir" ] && ! command -v nft >/dev/null; then
    echo "Error: --exclusive needs nftables (apt-get install nftables)" >&2
    exit 69
  fi
fi

if [ -z "$destdir" ]; then
  command -v systemd-sysusers >/dev/null && systemd-sysusers waymark.conf || true
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
    systemctl daemon-reload
  fi
  if command -v udevadm >/dev/null && [ -S /run/udev/control ]; then
    udevadm control --reload
  fi
fi
if ((exclusive)) && [ -z "$destdir" ] && [ -d /run/systemd/system ]; then
  systemctl enable --now waymark-exclusive.service
  echo "exclusive profile on: only waymarkd (and root) reach gpsd's port;" \
    "undo with: systemctl disable --now waymark-exclusive.service"
fi
echo "installed under ${destdir:-/} (prefix $prefix)"
