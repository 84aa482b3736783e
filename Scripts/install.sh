#!/usr/bin/env bash
# Installs waymark and waymarkd (one executable under two names: waymarkd is a hard link to
# waymark) with their systemd unit, sysusers.d entry, udev rule and default configuration. Run
# from the package root after `swift build -c release --static-swift-stdlib`.
#
#   Scripts/install.sh [--destdir <dir>] [--prefix /usr/local] [--build-dir .build/release]
#                      [--exclusive] [--geoclue] [--no-enable]
#   Scripts/install.sh --uninstall [--purge] [--destdir <dir>] [--prefix /usr/local]
#
# With --destdir (packaging, tests) files go under <dir> and nothing on the running system is
# touched. Without it (needs root): systemd-sysusers creates the user, the daemon gets its own
# grant (waymarkd always, once), the unit is enabled and (re)started (not with --no-enable),
# systemd and udev are reloaded and udev replays "add" for ttys already plugged in.
# <prefix>/share/waymark/install-manifest lists what was installed; --uninstall stops and
# disables the units and removes those files whose checksum is still the one installed,
# keeping the store and every edited file (--purge removes the store and the configuration too).
# waymarkd's helper waymark-identify goes to <prefix>/libexec/waymark with its socket and
# service (waymark-identify.socket, waymark-identify@.service); waymarkd.service pulls it in.
# --exclusive also installs the exclusive profile (an nftables rule: gpsd's client port answers
# waymarkd and root only; drop-ins that keep gpsd down without the rule and give it a private
# IPC namespace; a udev rule that makes the receiver gpsd's alone) and enables it; undo:
# Scripts/install.sh --uninstall (docs/guide/desktop.md, "Exclusive profile").
# --geoclue makes GeoClue (and so the whole desktop) read waymarkd's NMEA socket: a drop-in for
# geoclue.service adds --nmea-socket, waymark.conf gets nmea-socket, and GeoClue's identity
# geoclue:/usr/libexec/geoclue is granted whenInUse in the store. Undo: see docs/guide/desktop.md, "Desktop (GeoClue)".
set -euo pipefail
destdir=""
prefix="/usr/local"
build=".build/release"
exclusive=0
geoclue=0
enable=1
uninstall=0
purge=0
while (($#)); do
  case "$1" in
    --destdir) destdir="${2:?--destdir needs a directory}"; shift 2 ;;
    --destdir=*) destdir="${1#*=}"; shift ;;
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#*=}"; shift ;;
    --build-dir) build="${2:?--build-dir needs a directory}"; shift 2 ;;
    --build-dir=*) build="${1#*=}"; shift ;;
    --exclusive) exclusive=1; shift ;;
    --geoclue) geoclue=1; shift ;;
    --no-enable) enable=0; shift ;;
    --uninstall) uninstall=1; shift ;;
    --purge) purge=1; shift ;;
    -h|--help) sed -n '2,21s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "Error: unknown argument '$1'" >&2; exit 64 ;;
  esac
done
if ((purge)) && ! ((uninstall)); then
  echo "Error: --purge goes with --uninstall" >&2
  exit 64
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
manifest="$prefix/share/waymark/install-manifest"
if ((uninstall)); then
  exec "$root/Scripts/uninstall.sh" "$destdir" "$prefix" "$purge"
fi
for binary in waymark waymark-identify; do
  [ -x "$build/$binary" ] || { echo "Error: $build/$binary missing; run swift build -c release" >&2; exit 66; }
done
# Every requirement is checked before anything is written: the profile's gpsd drop-ins require
# the nftables unit, so writing them without nft would leave gpsd unable to start.
if ((exclusive)) && [ -z "$destdir" ] && ! command -v nft >/dev/null; then
  echo "Error: --exclusive needs nftables (apt-get install nftables); nothing was installed" >&2
  exit 69
fi

if command -v ldd >/dev/null && ldd "$build/waymark" 2>/dev/null | grep -c 'libswiftCore\.so' >/dev/null; then
  echo "note: $build/waymark uses the shared Swift runtime; build with" \
    "'swift build -c release --static-swift-stdlib' for a self-contained daemon with the" \
    "smallest memory footprint (docs/guide/daemon.md, Install)" >&2
fi

install -d "$destdir$prefix/bin" "$destdir/etc/systemd/system" "$destdir/etc/udev/rules.d" \
  "$destdir/etc/waymark" "$destdir/usr/lib/sysusers.d" "$destdir$prefix/share/doc/waymark"
# One file, two names (the name it runs under chooses the program): a hard link, so that
# /proc/<pid>/exe reads the name each was started as (docs/architecture.md, "One executable").
install -m 0755 "$build/waymark" "$destdir$prefix/bin/waymark"
ln -f "$destdir$prefix/bin/waymark" "$destdir$prefix/bin/waymarkd"
sed "s#/usr/local/bin/waymarkd#$prefix/bin/waymarkd#; s#/usr/local/share/doc#$prefix/share/doc#" \
  systemd/waymarkd.service > "$destdir/etc/systemd/system/waymarkd.service"
chmod 0644 "$destdir/etc/systemd/system/waymarkd.service"
install -m 0644 systemd/waymark.sysusers "$destdir/usr/lib/sysusers.d/waymark.conf"
# waymarkd's privilege-separated helper (docs/guide/daemon.md, "Hardening and checks").
install -d "$destdir$prefix/libexec/waymark"
install -m 0755 "$build/waymark-identify" "$destdir$prefix/libexec/waymark/waymark-identify"
for unit in waymark-identify.socket waymark-identify@.service; do
  sed "s#/usr/local/libexec/waymark#$prefix/libexec/waymark#; s#/usr/local/share/doc#$prefix/share/doc#" \
    "systemd/$unit" > "$destdir/etc/systemd/system/$unit"
  chmod 0644 "$destdir/etc/systemd/system/$unit"
done
install -m 0644 udev/61-waymark.rules "$destdir/etc/udev/rules.d/61-waymark.rules"
install -m 0644 README.md "$destdir$prefix/share/doc/waymark/README.md"
# Manual pages (man/, rendered from the --help texts) and completions (from the command table).
share="$destdir$prefix/share"
install -d "$share/man/man1" "$share/man/man5" "$share/man/man8" \
  "$share/bash-completion/completions" "$share/zsh/site-functions" "$share/fish/vendor_completions.d"
install -m 0644 man/waymark.1 "$share/man/man1/waymark.1"
install -m 0644 man/waymark.conf.5 "$share/man/man5/waymark.conf.5"
install -m 0644 man/waymarkd.8 "$share/man/man8/waymarkd.8"
"$build/waymark" docs completions bash > "$share/bash-completion/completions/waymark"
"$build/waymark" docs completions zsh > "$share/zsh/site-functions/_waymark"
"$build/waymark" docs completions fish > "$share/fish/vendor_completions.d/waymark.fish"
chmod 0644 "$share/bash-completion/completions/waymark" "$share/zsh/site-functions/_waymark" \
  "$share/fish/vendor_completions.d/waymark.fish"
# Never overwrite a configuration someone has edited. The manifest keeps the checksum of the
# configuration as install.sh wrote it: --uninstall removes it only while it is unchanged.
config_sum=""
if [ ! -e "$destdir/etc/waymark/waymark.conf" ]; then
  install -m 0644 config/waymark.conf "$destdir/etc/waymark/waymark.conf"
elif [ -f "$destdir$manifest" ]; then
  config_sum="$(sed -n 's#^\([0-9a-f]*\)  /etc/waymark/waymark.conf$#\1#p' "$destdir$manifest")"
fi
config_sum="${config_sum:-$(sha256sum < config/waymark.conf | cut -d' ' -f1)}"
files=("$prefix/bin/waymark" "$prefix/bin/waymarkd" /etc/systemd/system/waymarkd.service
  /usr/lib/sysusers.d/waymark.conf /etc/udev/rules.d/61-waymark.rules
  "$prefix/share/doc/waymark/README.md" "$prefix/share/man/man1/waymark.1"
  "$prefix/share/man/man5/waymark.conf.5" "$prefix/share/man/man8/waymarkd.8"
  "$prefix/share/bash-completion/completions/waymark" "$prefix/share/zsh/site-functions/_waymark"
  "$prefix/share/fish/vendor_completions.d/waymark.fish"
  "$prefix/libexec/waymark/waymark-identify" /etc/systemd/system/waymark-identify.socket
  /etc/systemd/system/waymark-identify@.service)

if ((exclusive)); then
  install -m 0644 systemd/waymark-exclusive.nft "$destdir/etc/waymark/exclusive.nft"
  install -m 0644 systemd/waymark-exclusive.service \
    "$destdir/etc/systemd/system/waymark-exclusive.service"
  files+=(/etc/waymark/exclusive.nft /etc/systemd/system/waymark-exclusive.service)
  # gpsd only with the rule loaded, in a private IPC namespace, off the system bus; the receiver
  # gpsd's alone (not group dialout's).
  for unit in gpsd.service gpsd.socket; do
    install -d "$destdir/etc/systemd/system/$unit.d"
    install -m 0644 systemd/waymark-exclusive-gpsd.conf \
      "$destdir/etc/systemd/system/$unit.d/waymark-exclusive.conf"
    files+=("/etc/systemd/system/$unit.d/waymark-exclusive.conf")
  done
  install -m 0644 udev/62-waymark-exclusive.rules \
    "$destdir/etc/udev/rules.d/62-waymark-exclusive.rules"
  files+=(/etc/udev/rules.d/62-waymark-exclusive.rules)
fi

nmea_socket=/run/waymark/nmea.sock
if ((geoclue)); then
  install -d "$destdir/etc/systemd/system/geoclue.service.d"
  cat > "$destdir/etc/systemd/system/geoclue.service.d/waymark.conf" <<DROPIN
# Installed by Waymark's install.sh --geoclue: GeoClue reads waymarkd's NMEA socket.
# Undo: rm this file; systemctl daemon-reload; systemctl restart geoclue
[Unit]
After=waymarkd.service
[Service]
ExecStart=
ExecStart=/usr/libexec/geoclue --nmea-socket=$nmea_socket
DROPIN
  chmod 0644 "$destdir/etc/systemd/system/geoclue.service.d/waymark.conf"
  files+=(/etc/systemd/system/geoclue.service.d/waymark.conf)
  config="$destdir/etc/waymark/waymark.conf"
  if ! grep -Eq '^[[:space:]]*nmea-socket[[:space:]]*=' "$config"; then
    unedited=0
    [ "$(sha256sum < "$config" | cut -d' ' -f1)" = "$config_sum" ] && unedited=1
    printf '\n# Added by install.sh --geoclue (GeoClue reads it; docs/guide/desktop.md).\nnmea-socket = %s\n' \
      "$nmea_socket" >> "$config"
    # Our own line does not make the file an operator's edit.
    if ((unedited)); then config_sum="$(sha256sum < "$config" | cut -d' ' -f1)"; fi
  fi
fi

# polkit: the actions whose authorization lets an agent's answer persist (docs/guide/socket.md, "Agents").
# polkitd reads actions from /usr/share/polkit-1/actions only, whatever the prefix.
install -d "$destdir/usr/share/polkit-1/actions"
install -m 0644 polkit/org.waymark.location.policy \
  "$destdir/usr/share/polkit-1/actions/org.waymark.location.policy"
files+=(/usr/share/polkit-1/actions/org.waymark.location.policy)

# The manifest: "<sha256>  <path>" per installed file, with what an earlier run installed and
# this one did not (an --exclusive or --geoclue of before), so that --uninstall finds it all.
install -d "$destdir$prefix/share/waymark"
{
  for path in "${files[@]}"; do
    printf '%s  %s\n' "$(sha256sum < "$destdir$path" | cut -d' ' -f1)" "$path"
  done
  printf '%s  %s\n' "$config_sum" /etc/waymark/waymark.conf
  if [ -f "$destdir$manifest" ]; then
    while read -r sum path; do
      if [ -e "$destdir$path" ]; then printf '%s  %s\n' "$sum" "$path"; fi
    done < "$destdir$manifest"
  fi
} | sort -s -u -k2,2 > "$destdir$manifest.new"
mv "$destdir$manifest.new" "$destdir$manifest"
chmod 0644 "$destdir$manifest"

# Grants in the daemon's store, written as the daemon's user so that the file stays the
# daemon's (with --destdir, as whoever runs this).
store="$destdir/var/lib/waymark/waymark.db"
grant() {
  local command=("$destdir$prefix/bin/waymark" auth "$@" --store "$store")
  install -d "$(dirname "$store")"
  if [ -z "$destdir" ] && id waymark >/dev/null 2>&1 && command -v setpriv >/dev/null; then
    chown waymark:waymark "$(dirname "$store")"
    # A store written before as root becomes the daemon's; -h: a link is not followed.
    for file in "$store" "$store-wal" "$store-shm"; do
      if [ -f "$file" ] && [ "$(stat -c %u "$file")" = 0 ]; then chown -h waymark:waymark "$file"; fi
    done
    chmod 0770 "$(dirname "$store")"
    setpriv --reuid=waymark --regid=waymark --clear-groups "${command[@]}"
  else
    "${command[@]}"
  fi
}

systemd=0
if [ -z "$destdir" ]; then
  command -v systemd-sysusers >/dev/null && systemd-sysusers waymark.conf || true
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
    systemd=1
    systemctl daemon-reload
  fi
  # The daemon's own grant (docs/guide/daemon.md, "Grant always, add places"), once: an operator's later
  # choice for the client (never, or revoked and asked again) is left alone.
  client="$(sed -n 's/^[[:space:]]*client[[:space:]]*=[[:space:]]*"\{0,1\}\([^"]*\)"\{0,1\}[[:space:]]*$/\1/p' \
    /etc/waymark/waymark.conf | tail -n 1)"
  client="${client:-waymarkd}"
  if [ ! -e "$store" ] || [[ "$(grant status "$client")" == *'"notDetermined"'* ]]; then
    grant grant "$client" always >/dev/null
    echo "granted '$client' always in $store (the daemon's own grant)"
  else
    echo "'$client' already has a grant in $store; left as it is"
  fi
  if command -v udevadm >/dev/null && [ -S /run/udev/control ]; then
    udevadm control --reload
    # Receivers plugged in before the rule existed: replay their "add" events.
    udevadm trigger --action=add --subsystem-match=tty
  fi
fi
if ((exclusive)) && ((systemd)); then
  systemctl enable --now waymark-exclusive.service
  # A running gpsd gets its private IPC namespace (and loses the bus) on restart.
  systemctl try-restart gpsd.service
  echo "exclusive profile on: only waymarkd (and root) reach gpsd's port, gpsd runs only with" \
    "that rule, its shared memory is private and the receiver is gpsd's alone;" \
    "undo with: Scripts/install.sh --uninstall (docs/guide/desktop.md, Exclusive profile)"
fi
if ((geoclue)); then
  # GeoClue runs as user geoclue: grant that identity in the daemon's store. Granted before
  # GeoClue restarts: GeoClue 2.6 does not reconnect to an NMEA socket that turned it away.
  grant grant geoclue:/usr/libexec/geoclue whenInUse >/dev/null
fi
if ((systemd)); then
  if ((enable)); then
    systemctl enable waymarkd.service
    systemctl restart waymarkd.service
    echo "waymarkd.service enabled and (re)started; systemctl status waymarkd"
  else
    systemctl try-restart waymarkd.service
  fi
  if ((geoclue)); then systemctl try-restart geoclue.service; fi
fi
if ((geoclue)); then
  echo "GeoClue: reads $nmea_socket; granted geoclue:/usr/libexec/geoclue whenInUse in $store." \
    "Undo: rm /etc/systemd/system/geoclue.service.d/waymark.conf, remove the nmea-socket line" \
    "of /etc/waymark/waymark.conf, waymark auth revoke geoclue:/usr/libexec/geoclue --store" \
    "/var/lib/waymark/waymark.db, systemctl daemon-reload, restart waymarkd and geoclue"
fi
echo "installed under ${destdir:-/} (prefix $prefix); undo: Scripts/install.sh --uninstall" \
  "(keeps the store and edited files; --purge removes the store and the configuration)"
