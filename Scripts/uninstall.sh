#!/usr/bin/env bash
# Removes what Scripts/install.sh installed; run it as `Scripts/install.sh --uninstall [--purge]
# [--destdir <dir>] [--prefix <prefix>]` (this script takes those three values in that order).
#
# Reads <prefix>/share/waymark/install-manifest ("<sha256>  <path>" lines), stops and disables
# the units it lists, removes every listed file whose checksum is still the one install.sh
# wrote (an edited file, whatever it is, is kept and named), and keeps the store /var/lib/waymark
# and the system user waymark. --purge also removes the configuration, edited or not,
# /etc/waymark and the store (edited files elsewhere are still kept).
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "Error: run it as: Scripts/install.sh --uninstall [--purge] [--destdir <dir>]" \
    "[--prefix <prefix>]" >&2
  exit 64
fi
destdir="$1"
prefix="$2"
purge="$3"
manifest="$destdir$prefix/share/waymark/install-manifest"
[ -f "$manifest" ] || {
  echo "Error: $manifest missing: nothing was installed by install.sh under ${destdir:-/} with" \
    "--prefix $prefix" >&2
  exit 66
}

systemd=0
if [ -z "$destdir" ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
  systemd=1
fi
listed() { grep -q "  $1\$" "$manifest"; }
exclusive=0
if listed /etc/systemd/system/waymark-exclusive.service; then exclusive=1; fi
if [ -z "$destdir" ] && command -v systemctl >/dev/null; then
  for unit in waymarkd.service waymark-identify.socket waymark-exclusive.service; do
    if listed "/etc/systemd/system/$unit"; then
      if ((systemd)); then systemctl stop "$unit" || true; fi
      systemctl disable "$unit" 2>/dev/null || true
    fi
  done
fi

kept=()
removed=0
while read -r sum path; do
  file="$destdir$path"
  [ -e "$file" ] || continue
  # Only a file as install.sh wrote it goes (a link or anything not a regular file is an
  # operator's); --purge also takes an edited file under /etc/waymark (the configuration).
  if [ -L "$file" ] || [ ! -f "$file" ] ||
    [ "$(sha256sum < "$file" | cut -d' ' -f1)" != "$sum" ]; then
    if ! ((purge)) || [[ "$path" != /etc/waymark/* ]]; then
      kept+=("$path (edited)")
      continue
    fi
  fi
  rm -f "$file"
  removed=$((removed + 1))
done < "$manifest"
rm -f "$manifest"
if ((purge)); then
  rm -rf "$destdir/var/lib/waymark" "$destdir/etc/waymark"
elif [ -e "$destdir/var/lib/waymark" ]; then
  kept+=("/var/lib/waymark (the store: places, visits, grants)")
fi
# Waymark's own directories, once empty.
for directory in /etc/waymark "$prefix/share/doc/waymark" "$prefix/share/waymark" \
  "$prefix/libexec/waymark" /etc/systemd/system/geoclue.service.d \
  /etc/systemd/system/gpsd.service.d /etc/systemd/system/gpsd.socket.d; do
  rmdir "$destdir$directory" 2>/dev/null || true
done

if [ -z "$destdir" ]; then
  if ((systemd)); then
    systemctl daemon-reload
    systemctl try-restart geoclue.service || true
    # Stopping the exclusive profile stopped gpsd (its drop-in required the profile): without
    # the drop-in, gpsd's socket listens again and gpsd runs as Debian ships it.
    if ((exclusive)); then systemctl start gpsd.socket || true; fi
  fi
  if command -v udevadm >/dev/null && [ -S /run/udev/control ]; then
    udevadm control --reload
    # The receiver's mode as Debian's rules give it (root:dialout 0660) again.
    if ((exclusive)); then udevadm trigger --action=change --subsystem-match=tty; fi
  fi
  if id waymark >/dev/null 2>&1; then
    kept+=("the system user waymark (userdel waymark removes it)")
  fi
fi
echo "removed $removed files under ${destdir:-/} (prefix $prefix)"
for item in "${kept[@]}"; do echo "kept: $item"; done
