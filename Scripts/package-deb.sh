#!/usr/bin/env bash
# Builds the Debian package waymark_<version>_<arch>.deb: waymark and waymarkd (one executable
# with the static Swift runtime under both names, a hard link: the name chooses the program),
# the systemd unit, waymarkd's helper waymark-identify (Embedded Swift, glibc alone; its socket
# and service), the sysusers.d user, the udev rule, the configuration (a conffile), manual
# pages, bash/zsh/fish completions and the maintainer scripts of packaging/debian (postinst:
# user, the daemon's grant, enable --now, udevadm trigger).
#
#   Scripts/package-deb.sh [--build-dir <dir>] [--output <dir>] [--compression xz|gzip]
#
# Without --build-dir it runs `swift build -c release --static-swift-stdlib` for the products
# waymark and waymark-identify. With it, the binaries in <dir> are packaged as they are, and
# refused (exit 65) when they use the shared Swift runtime. The package lands in <output>
# (default: the current directory); the version is the first line of packaging/debian/changelog.
# xz (the default) makes it a third smaller than gzip and takes five times longer. Needs
# dpkg-dev (dpkg-shlibdeps computes Depends from the libraries the binaries link). Install:
# apt install ./waymark_*.deb
set -euo pipefail
build=""
output="$PWD"
compression=xz
while (($#)); do
  case "$1" in
    --build-dir) build="${2:?--build-dir needs a directory}"; shift 2 ;;
    --build-dir=*) build="${1#*=}"; shift ;;
    --output) output="${2:?--output needs a directory}"; shift 2 ;;
    --output=*) output="${1#*=}"; shift ;;
    --compression) compression="${2:?--compression needs xz or gzip}"; shift 2 ;;
    --compression=*) compression="${1#*=}"; shift ;;
    -h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "Error: unknown argument '$1'" >&2; exit 64 ;;
  esac
done
case "$compression" in
  xz|gzip) ;;
  *) echo "Error: --compression '$compression': expected xz or gzip" >&2; exit 64 ;;
esac
umask 022
output="$(mkdir -p "$output" && cd "$output" && pwd)"
source="$(cd "$(dirname "$0")/.." && pwd)"
cd "$source"
for tool in dpkg-deb dpkg-shlibdeps; do
  command -v "$tool" >/dev/null || { echo "Error: $tool missing (apt-get install dpkg-dev)" >&2; exit 69; }
done

if [ -z "$build" ]; then
  for product in waymark waymark-identify; do
    swift build -c release -j 2 --static-swift-stdlib --product "$product"
  done
  build="$(swift build -c release --show-bin-path)"
fi
for binary in waymark waymark-identify; do
  [ -x "$build/$binary" ] || { echo "Error: $build/$binary missing" >&2; exit 66; }
  # (grep reads all of ldd's output: with pipefail, grep -q could end ldd by SIGPIPE.)
  if ldd "$build/$binary" | grep -c 'libswift[A-Za-z_]*\.so' >/dev/null; then
    echo "Error: $build/$binary uses the shared Swift runtime; build it with" \
      "'swift build -c release --static-swift-stdlib'" >&2
    exit 65
  fi
done

changelog=packaging/debian/changelog
version="$(sed -n '1s/^waymark (\([^)]*\)).*/\1/p' "$changelog")"
[ -n "$version" ] || { echo "Error: $changelog:1: expected 'waymark (<version>) ...'" >&2; exit 65; }
# One source of truth: the changelog's upstream version is the one the binaries print.
release_file=Sources/WaymarkCore/WaymarkRelease.swift
release="$(sed -n 's/^ *public static let version = "\([^"]*\)"$/\1/p' "$release_file")"
if [ "${version%-*}" != "$release" ]; then
  echo "Error: $changelog:1: version ${version%-*} differs from $release in $release_file" >&2
  exit 65
fi
arch="$(dpkg --print-architecture)"
root="$(mktemp -d)"
trap 'rm -rf "$root"' EXIT
chmod 0755 "$root"

install -d "$root/usr/bin" "$root/lib/systemd/system" "$root/lib/udev/rules.d" \
  "$root/usr/lib/sysusers.d" "$root/etc/waymark" "$root/usr/share/doc/waymark" \
  "$root/usr/share/lintian/overrides" "$root/DEBIAN"
# One file, two names: waymarkd is a hard link to waymark (the name it runs under chooses the
# program). A hard link, not a symbolic one, so that /proc/<pid>/exe reads the name it was
# started as and each keeps its identity as a client of the daemon (docs/architecture.md, "One
# executable").
install -m 0755 "$build/waymark" "$root/usr/bin/waymark"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/waymark"
ln "$root/usr/bin/waymark" "$root/usr/bin/waymarkd"
sed 's#/usr/local/bin/waymarkd#/usr/bin/waymarkd#' systemd/waymarkd.service |
  sed 's#^Documentation=.*#Documentation=man:waymarkd(8) file:///usr/share/doc/waymark/README.md.gz#' \
    > "$root/lib/systemd/system/waymarkd.service"
# waymarkd's privilege-separated helper, its socket and service (docs/guide/daemon.md, "Hardening and checks").
install -d "$root/usr/libexec/waymark"
install -m 0755 "$build/waymark-identify" "$root/usr/libexec/waymark/waymark-identify"
strip --strip-unneeded --remove-section=.comment --remove-section=.note \
  "$root/usr/libexec/waymark/waymark-identify"
for unit in waymark-identify.socket waymark-identify@.service; do
  sed 's#/usr/local/libexec/waymark#/usr/libexec/waymark#' "systemd/$unit" |
    sed 's#^Documentation=.*#Documentation=man:waymarkd(8) file:///usr/share/doc/waymark/README.md.gz#' \
      > "$root/lib/systemd/system/$unit"
done
install -m 0644 udev/61-waymark.rules "$root/lib/udev/rules.d/61-waymark.rules"
install -m 0644 systemd/waymark.sysusers "$root/usr/lib/sysusers.d/waymark.conf"
install -m 0644 config/waymark.conf "$root/etc/waymark/waymark.conf"
install -m 0644 packaging/debian/copyright "$root/usr/share/doc/waymark/copyright"
install -m 0644 packaging/debian/lintian-overrides "$root/usr/share/lintian/overrides/waymark"
gzip -9n < "$changelog" > "$root/usr/share/doc/waymark/changelog.Debian.gz"
gzip -9n < README.md > "$root/usr/share/doc/waymark/README.md.gz"
for page in waymark.1 waymark.conf.5 waymarkd.8; do
  install -d "$root/usr/share/man/man${page##*.}"
  gzip -9n < "man/$page" > "$root/usr/share/man/man${page##*.}/$page.gz"
done
for completion in bash:bash-completion/completions/waymark zsh:zsh/vendor-completions/_waymark \
  fish:fish/vendor_completions.d/waymark.fish; do
  install -d "$(dirname "$root/usr/share/${completion#*:}")"
  "$build/waymark" docs completions "${completion%%:*}" > "$root/usr/share/${completion#*:}"
done
# polkit: the actions whose authorization lets an agent's answer persist (docs/guide/socket.md, "Agents").
install -d "$root/usr/share/polkit-1/actions"
install -m 0644 polkit/org.waymark.location.policy \
  "$root/usr/share/polkit-1/actions/org.waymark.location.policy"
find "$root" -type f ! -path "$root/usr/bin/*" ! -path "$root/usr/libexec/*" -exec chmod 0644 {} +

# Depends: gpsd, systemd (sysusers, the unit) and the packages of the linked libraries.
# Recommends: polkitd (agents' lasting answers), libmosquitto1 and libcurl4 (MQTT and the
# Traccar output load them when configured), libjs-leaflet (the interactive HTML map; without it
# 'waymark map' writes the static page).
shlibs="$(mktemp -d)"
mkdir "$shlibs/debian"
printf 'Source: waymark\n\nPackage: waymark\nArchitecture: any\n' > "$shlibs/debian/control"
libraries="$(cd "$shlibs" && dpkg-shlibdeps -O -e "$root/usr/bin/waymark" -e "$root/usr/bin/waymarkd" \
  -e "$root/usr/libexec/waymark/waymark-identify" \
  2>/dev/null | sed -n 's/^shlibs:Depends=//p')"
rm -rf "$shlibs"
[ -n "$libraries" ] || { echo "Error: dpkg-shlibdeps found no libraries" >&2; exit 70; }

cat > "$root/DEBIAN/control" <<CONTROL
Package: waymark
Version: $version
Architecture: $arch
Maintainer: $(sed -n 's/^ -- \(.*>\)  .*/\1/p' "$changelog" | head -n 1)
Installed-Size: $(du -sk --exclude=DEBIAN "$root" | cut -f1)
Depends: $libraries, gpsd, systemd
Recommends: polkitd, libmosquitto1, libcurl4, libjs-leaflet
Section: misc
Priority: optional
Description: CoreLocation-style location services and place monitoring over gpsd
 Waymark gives a GPS receiver read through gpsd the programming model of
 CoreLocation: locations with accuracies, authorization per client, places
 that are entered and left, and visits kept in a SQLite store.
 .
 This package holds the waymark command line tool and the waymarkd daemon
 (one executable under two names) with its systemd unit, which follows gpsd,
 records arrivals, departures and visits, runs hooks and serves locations on a
 socket under per-client grants.
CONTROL
echo /etc/waymark/waymark.conf > "$root/DEBIAN/conffiles"
for script in postinst prerm postrm; do
  install -m 0755 "packaging/debian/$script" "$root/DEBIAN/$script"
done
(cd "$root" && find . -type f ! -path './DEBIAN/*' ! -path './etc/*' -printf '%P\0' | sort -z |
  xargs -0 md5sum) > "$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"

package="$output/waymark_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Z"$compression" --build "$root" "$package" >/dev/null
echo "$package"
