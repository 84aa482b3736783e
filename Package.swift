// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "Waymark",
  products: [
    // What applications import: `Waymark` (re-exports WaymarkCore's value types and
    // WaymarkClient, waymarkd's socket), the sources (`GPSD` for a receiver, `NMEA` for logs)
    // and `WaymarkStore` (places, visits in SQLite). The daemon's server (WaymarkBroker) is no
    // product: an application never links it.
    .library(name: "Waymark", targets: ["Waymark"]),
    .library(name: "WaymarkCoreLocation", targets: ["WaymarkCoreLocation"]),
    .library(name: "WaymarkCore", targets: ["WaymarkCore"]),
    .library(name: "GPSD", targets: ["GPSD"]),
    .library(name: "NMEA", targets: ["NMEA"]),
    .library(name: "WaymarkStore", targets: ["WaymarkStore"]),
    .library(name: "WaymarkNotifications", targets: ["WaymarkNotifications"]),
    .executable(name: "waymark", targets: ["waymark"]),
    .executable(name: "waymarkd", targets: ["waymarkd"]),
    .executable(name: "waymark-identify", targets: ["waymark-identify"]),
    .executable(name: "waymark-bench", targets: ["WaymarkBenchmarks"]),
  ],
  targets: [
    // C edges: one Swift target per C library.
    .systemLibrary(
      name: "CGPS",
      pkgConfig: "libgps",
      providers: [.apt(["libgps-dev"])]
    ),
    .systemLibrary(
      name: "CSQLite",
      pkgConfig: "sqlite3",
      providers: [.apt(["libsqlite3-dev"])]
    ),
    // epoll(7) from glibc (not in the toolchain's Glibc module); only the benchmarks import it.
    .systemLibrary(name: "CEpoll"),
    // pidfd_open(2) from glibc 2.36; only WaymarkIdentify imports it.
    .systemLibrary(name: "CPidfd"),
    .systemLibrary(
      name: "CMosquitto",
      pkgConfig: "libmosquitto",
      providers: [.apt(["libmosquitto-dev"])]
    ),

    // Value types, geodesy, streams. No C, no I/O.
    .target(name: "WaymarkCore"),
    // NMEA 0183 framing, typed sentences, epoch fix assembly, log replay, writer.
    .target(name: "NMEA", dependencies: ["WaymarkCore"]),
    // The only importer of CGPS.
    .target(name: "GPSD", dependencies: ["WaymarkCore", "CGPS"]),
    // The only importer of CSQLite.
    .target(name: "WaymarkStore", dependencies: ["WaymarkCore", "CSQLite"]),
    // The library users import: LocationManager, PlaceMonitor, visits, live updates from
    // whichever source is there (waymarkd through WaymarkClient, else gpsd, else a log).
    // Foundation-free (FoundationEssentials only), so that waymarkd links no ICU.
    .target(name: "Waymark", dependencies: ["WaymarkCore", "WaymarkClient", "GPSD", "NMEA"]),
    // CoreLocation's names (CLLocationUpdate, CLMonitor, CLLocationCoordinate2D, ...) for
    // Waymark's types, so that iOS 17 code compiles with only its import changed.
    .target(name: "WaymarkCoreLocation", dependencies: ["Waymark"]),
    // The client side of waymarkd's location socket (connection, typed messages, the daemon
    // as a FixSource), without the server. FoundationEssentials only.
    .target(name: "WaymarkClient", dependencies: ["WaymarkCore"]),
    // Place events posted to Foundation's NotificationCenter, with leak-free observation.
    .target(name: "WaymarkNotifications", dependencies: ["Waymark", "WaymarkCore"]),
    // The process layer shared by waymark, waymarkd and waymark-bench: exit codes and command
    // errors, buffered output, store path resolution, the one spawner (posix_spawn), signal
    // watching, and the argument parser (options declared once: parsing, --help, man pages and
    // completions come from the declaration). FoundationEssentials only.
    .target(name: "WaymarkProcess", dependencies: ["WaymarkCore", "WaymarkStore"]),
    // The daemon runtime (configuration, logs, sd_notify, hooks) and, for now, the pipeline's
    // sinks. FoundationEssentials only, like everything waymarkd links: no Foundation,
    // CoreFoundation or ICU.
    .target(
      name: "WaymarkService",
      dependencies: [
        "Waymark", "GPSD", "WaymarkStore", "WaymarkCore", "WaymarkBroker", "WaymarkMQTT",
        "WaymarkProcess",
      ]),
    // The only importer of CMosquitto: OwnTracks messages and the outbox publisher.
    .target(name: "WaymarkMQTT", dependencies: ["WaymarkCore", "WaymarkStore", "CMosquitto"]),
    // waymarkd's location socket: peer identity, sessions, grants enforced. Its client is
    // WaymarkClient. FoundationEssentials only, like everything waymarkd links.
    .target(
      name: "WaymarkBroker",
      dependencies: ["Waymark", "WaymarkClient", "WaymarkCore", "WaymarkIdentify"]),
    // Who a peer process is, from /proc (pidfds, loopback TCP owners), and the wire of
    // waymark-identify. Glibc only: no Foundation, so that the helper stays small.
    .target(name: "WaymarkIdentify", dependencies: ["CPidfd"]),
    // The privilege-separated helper: holds CAP_SYS_PTRACE so that waymarkd holds none; a pidfd
    // or a loopback TCP socket in, a pid, start time and executable out.
    .executableTarget(name: "waymark-identify", dependencies: ["WaymarkIdentify"]),
    // Argument parsing and the waymark commands. FoundationEssentials only, like the daemon, so
    // that the static `waymark` carries neither Foundation nor ICU (CLIFootprintTests).
    .target(
      name: "WaymarkCLI",
      dependencies: [
        "Waymark", "WaymarkProcess", "WaymarkService", "NMEA", "GPSD", "WaymarkStore",
        "WaymarkSimulation", "WaymarkBroker", "WaymarkClient", "WaymarkMQTT",
      ]
    ),
    .executableTarget(name: "waymark", dependencies: ["WaymarkCLI"]),
    .executableTarget(name: "waymarkd", dependencies: ["WaymarkService"]),
    // A receiver on a pseudo-terminal and a private gpsd: `waymark simulate`, the gpsd tests
    // and the benchmarks (not a product: no application imports it). FoundationEssentials only.
    .target(name: "WaymarkSimulation", dependencies: ["WaymarkCore", "WaymarkProcess"]),
    // Test support (not a product): manual clock, scripted sources, decoding a log file,
    // running the built products.
    .target(name: "WaymarkTesting", dependencies: ["WaymarkCore", "NMEA", "WaymarkProcess"]),
    .executableTarget(
      name: "WaymarkBenchmarks",
      dependencies: [
        "Waymark", "NMEA", "GPSD", "WaymarkStore", "WaymarkSimulation", "WaymarkTesting",
        "WaymarkBroker", "WaymarkClient", "WaymarkMQTT", "WaymarkProcess", "WaymarkService",
        "CEpoll",
      ]
    ),

    .testTarget(name: "WaymarkCoreTests", dependencies: ["WaymarkCore"]),
    .testTarget(name: "WaymarkProcessTests", dependencies: ["WaymarkProcess"]),
    .testTarget(name: "NMEATests", dependencies: ["NMEA", "WaymarkTesting"]),
    .testTarget(
      name: "GPSDTests", dependencies: ["GPSD", "NMEA", "WaymarkSimulation", "WaymarkTesting"]
    ),
    .testTarget(
      name: "WaymarkTests",
      dependencies: [
        "Waymark", "WaymarkNotifications", "NMEA", "WaymarkSimulation", "WaymarkTesting",
      ]
    ),
    .testTarget(name: "WaymarkStoreTests", dependencies: ["WaymarkStore", "WaymarkTesting"]),
    .testTarget(
      name: "WaymarkMQTTTests", dependencies: ["WaymarkMQTT", "WaymarkCore", "WaymarkStore"]),
    .testTarget(
      name: "WaymarkClientTests",
      dependencies: ["WaymarkClient", "Waymark", "WaymarkCore", "WaymarkTesting"]),
    .testTarget(
      name: "WaymarkBrokerTests",
      dependencies: [
        "WaymarkBroker", "Waymark", "WaymarkCore", "WaymarkTesting", "WaymarkIdentify",
      ]
    ),
    .testTarget(
      name: "WaymarkDaemonTests",
      dependencies: [
        "WaymarkService", "WaymarkCLI", "WaymarkSimulation", "WaymarkTesting", "WaymarkStore",
        "Waymark", "NMEA", "WaymarkBroker", "WaymarkMQTT", "WaymarkIdentify", "GPSD",
      ]
    ),
    .testTarget(
      name: "WaymarkCLITests",
      dependencies: [
        "WaymarkCLI", "WaymarkProcess", "WaymarkService", "WaymarkStore", "NMEA", "WaymarkTesting",
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)
