#!/usr/bin/env bash
# Installs the Debian packages Waymark needs to build, test and run. Idempotent; needs root.
set -euo pipefail
packages=(pkg-config libgps-dev libsqlite3-dev gpsd gpsd-clients sqlite3 systemd udev nftables
  dbus-daemon geoclue-2.0 geoclue-2-demo libmosquitto-dev mosquitto mosquitto-clients openssl
  iproute2 python3 groff-base zsh fish)
# lintian and dpkg-dev (dpkg-shlibdeps) for Scripts/package-deb.sh and DebianPackageTests;
# binutils (strip, nm) for the package and CLIFootprintTests.
packages+=(lintian dpkg-dev binutils)
missing=()
# gpsbabel, xmllint (libxml2-utils) and ogrinfo (gdal-bin) read the track exports in the tests.
packages+=(gpsbabel libxml2-utils gdal-bin)
# chromium (headless) renders the output of 'waymark map' to PNG in MapPictureTests.
packages+=(chromium)
# libjs-leaflet: 'waymark map --format html' embeds its Leaflet (MapLeafletTests, MapYearTests).
packages+=(libjs-leaflet)
# unshare, mount and setpriv: faults.sh's disk stage and BadStoreTests (tmpfs, running as nobody).
packages+=(util-linux mount)
# polkitd (polkitd, pkcheck, pkaction): PolkitAuthorityTests ask a real polkitd on a private bus.
packages+=(polkitd)
# libfaketime jumps waymarkd's system clock in the fault campaign's clock stage (Scripts/faults.sh).
packages+=(libfaketime)
# gdb and procps: when the tests overrun, Scripts/test.sh prints the processes and the test
# process's stacks before it stops them.
packages+=(gdb procps)
# libcurl's header (WaymarkTraccar loads libcurl4 itself when the Traccar output is configured).
packages+=(libcurl4-openssl-dev)
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
# The gpsd package may start a system gpsd on port 2947; Waymark's tests start their own on free
# ports and never need it.
