# Sourced by the Fuzz/run-*.sh scripts, with `flags` set (optimisation, sanitizers, language
# mode). Builds the package's modules as static libraries for the harnesses, into one directory
# that every script shares, Fuzz/out-modules: a module is rebuilt only when one of its sources,
# a module listed before it in the calling script (they are listed in dependency order) or the
# flags changed, so that the campaign builds each module once, not once for each harness.
#
#   module <name> <source…>    builds module <name> (WaymarkBroker with -enable-testing: the
#                              invariant and agent harnesses drive its internal types)
#   build_waymark_modules      Waymark and what it stands on
#   build_broker_modules       the broker and what it stands on; sets `broker_libraries`
#   harness_flags              the flags to compile a harness against the modules
modules=Fuzz/out-modules
mkdir -p "$modules"
flags+=(-I Sources/CGPS -I Sources/CPidfd -I Sources/CSQLite)
if [ "$(cat "$modules/flags" 2>/dev/null)" != "${flags[*]}" ]; then
  rm -f "$modules"/*.a "$modules"/*.swift*
  echo "${flags[*]}" > "$modules/flags"
fi
harness_flags=("${flags[@]}" -I "$modules" -L "$modules")
listed=("$modules/flags")
module() {
  local name=$1 library="$modules/lib$1.a" extra=()
  shift
  [ "$name" != WaymarkBroker ] || extra=(-enable-testing)
  if [ ! -f "$library" ] || [ -n "$(find "$@" "${listed[@]}" -newer "$library" | head -n 1)" ]; then
    swiftc "${flags[@]}" "${extra[@]}" -emit-library -static -module-name "$name" -emit-module \
      -I "$modules" -emit-module-path "$modules/$name.swiftmodule" -o "$library" "$@"
  fi
  listed+=("$library")
}
# Waymark and what it stands on: the client, gpsd (libgps through CGPS), NMEA, WaymarkCore.
build_waymark_modules() {
  module WaymarkCore Sources/WaymarkCore/*.swift
  module NMEA Sources/NMEA/*.swift
  module WaymarkClient Sources/WaymarkClient/*.swift
  module GPSD Sources/GPSD/*.swift
  module Waymark Sources/Waymark/*.swift
}
build_broker_modules() {
  build_waymark_modules
  # PeerIdentity's /proc readers (WaymarkIdentify, over glibc's pidfd_open through CPidfd).
  module WaymarkIdentify Sources/WaymarkIdentify/*.swift
  module WaymarkBroker Sources/WaymarkBroker/*.swift
  broker_libraries=(-lWaymarkBroker -lWaymarkIdentify -lWaymark -lGPSD -lWaymarkClient -lNMEA
    -lWaymarkCore -lgps)
}
