# Sourced by Fuzz/run-broker.sh and Fuzz/run-agents.sh (with `out` and `flags` set).
# build_broker_modules [flag...] builds the broker and what it stands on into static libraries
# under $out, in dependency order — Waymark takes the client, gpsd (libgps through CGPS) and
# NMEA — and sets `broker_libraries` to link them; its arguments are extra flags for
# WaymarkBroker alone (`-enable-testing`).
flags+=(-I Sources/CGPS -I Sources/CPidfd)
build() {
  local name=$1
  shift
  swiftc "${flags[@]}" -emit-library -static -module-name "$name" -emit-module -I "$out" \
    -emit-module-path "$out/$name.swiftmodule" -o "$out/lib$name.a" "$@"
}
build_broker_modules() {
  build WaymarkCore Sources/WaymarkCore/*.swift
  build NMEA Sources/NMEA/*.swift
  build WaymarkClient Sources/WaymarkClient/*.swift
  build GPSD Sources/GPSD/*.swift
  build Waymark Sources/Waymark/*.swift
  # PeerIdentity's /proc readers (WaymarkIdentify, over glibc's pidfd_open through CPidfd).
  build WaymarkIdentify Sources/WaymarkIdentify/*.swift
  build WaymarkBroker "$@" Sources/WaymarkBroker/*.swift
  broker_libraries=(-lWaymarkBroker -lWaymarkIdentify -lWaymark -lGPSD -lWaymarkClient -lNMEA
    -lWaymarkCore -lgps)
}
