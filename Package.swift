// swift-tools-version:6.0
import PackageDescription

let package = Package(
  name: "Waymark",
  products: [
    // What applications import: `Waymark` (re-exports WaymarkCore's value types and
    // WaymarkClient, waymarkd's socket), the sources (`GPSD` for a receiver, `NMEA` for logs)
    // and `WaymarkStore` (places, visits in SQLite). The daemon's server (WaymarkBroker) is no
    // product: an application never links it. A module that is no library product (nor
    // re-exported by one) declares its API `package`, not `public` (ArchitectureDocTests).
    .library(name: "Waymark", targets: ["Waymark"]),
    .library(name: "WaymarkCoreLocation", targets: ["WaymarkCoreLocation"]),
    .library(name: "WaymarkCore", targets: ["WaymarkCore"]),
    .library(name: "GPSD", targets: ["GPSD"]),
    .library(name: "NMEA", targets: ["NMEA"]),
    .library(name: "WaymarkStore", targets: ["WaymarkStore"]),
    .library(name: "WaymarkNotifications", targets: ["WaymarkNotifications"]),
    .library(name: "WaymarkGazetteer", targets: ["WaymarkGazetteer"]),
    // One executable, `waymark`, is the CLI and the daemon (chosen by the name it runs under);
    // `waymarkd` is the same target linked under the daemon's name, so that `swift run waymarkd`
    // and the tests' `.build/<configuration>/waymarkd` run it. The package installs one file
    // and a hard link (docs/architecture.md, "One executable").
    .executable(name: "waymark", targets: ["waymark"]),
    .executable(name: "waymarkd", targets: ["waymark"]),
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
    // glibc for waymark-identify, built with Embedded Swift (which has no Glibc module).
    .systemLibrary(name: "CHelperLibc"),
    // libcurl's header only: WaymarkTraccar loads the library itself at run time (dlopen).
    .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
    // libmosquitto's headers only: WaymarkMQTT loads the library at run time (dlopen), so that a
    // daemon without MQTT maps neither it nor OpenSSL.
    .systemLibrary(name: "CMosquitto", providers: [.apt(["libmosquitto-dev"])]),

    // Value types, geodesy, streams, grants. No C; its I/O is the grants file (FileGrantStore:
    // locked, replaced by rename), and the services switch's file, a new thread's name and the
    // password database when $HOME is unset (its DocC catalog lists them).
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
    .target(name: "WaymarkCoreLocation", dependencies: ["Waymark", "WaymarkGazetteer"]),
    // The towns of GeoNames' table (population at least 15,000; CC BY 4.0, GEONAMES.md), built
    // in, with a grid index: CLGeocoder's answers and the town of a stay. No C, no I/O.
    .target(name: "WaymarkGazetteer", dependencies: ["WaymarkCore"], exclude: ["GEONAMES.md"]),
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
    // The pipeline that waymarkd and `waymark replay` both run: source → LocationManager →
    // PipelineInbox → VisitTracker (place monitor, visit recorder, saved state) and the stays →
    // the PipelineSink protocol, with the sinks both use or replay uses (track, MQTT outbox).
    // Neither the location socket's server nor the daemon: `waymark replay` runs it without them.
    // FoundationEssentials only.
    .target(
      name: "WaymarkPipeline",
      dependencies: ["Waymark", "WaymarkCore", "WaymarkStore", "WaymarkMQTT", "WaymarkTraccar"]),
    // What waymarkd reads when it starts: its command line (`WaymarkDaemon.options`, `help`) and
    // its configuration file (`DaemonConfiguration`, one table of keys that the parser, the
    // shipped config/waymark.conf and waymark.conf(5) come from). A target of its own so that
    // the commands read them (`status` shows the MQTT identity a file sets, `docs man` renders
    // waymarkd(8) and waymark.conf(5)) without depending on the daemon. It names the settings of
    // the modules it configures: the pipeline's track, MQTT's link, gpsd's endpoint, and the
    // agent rules (`AgentRule`, a value of WaymarkIdentify; matching a peer against one is the
    // broker's), so that the commands need no broker. FoundationEssentials only.
    .target(
      name: "WaymarkDaemonConfiguration",
      dependencies: [
        "Waymark", "WaymarkCore", "GPSD", "WaymarkIdentify", "WaymarkMQTT", "WaymarkProcess",
        "WaymarkPipeline", "WaymarkTraccar",
      ]),
    // waymarkd's runtime: the main loop (DaemonRuntime), reload, status, logs, hooks, sd_notify,
    // polkit, held monitors, and the daemon's own sinks (store health, log, location socket,
    // held monitors, hooks) around the pipeline. FoundationEssentials only, like everything
    // waymarkd links: no Foundation, CoreFoundation or ICU.
    .target(
      name: "WaymarkDaemon",
      dependencies: [
        "Waymark", "GPSD", "WaymarkStore", "WaymarkCore", "WaymarkBroker", "WaymarkMQTT",
        "WaymarkProcess", "WaymarkPipeline", "WaymarkDaemonConfiguration", "WaymarkTraccar",
      ]),
    // The only importer of CMosquitto: OwnTracks messages and the outbox publisher.
    .target(name: "WaymarkMQTT", dependencies: ["WaymarkCore", "WaymarkStore", "CMosquitto"]),
    // The only importer of CCurl: locations to a Traccar server in the OsmAnd protocol.
    .target(name: "WaymarkTraccar", dependencies: ["WaymarkCore", "WaymarkStore", "CCurl"]),
    // waymarkd's location socket: peer identity, sessions, grants enforced. Its client is
    // WaymarkClient. FoundationEssentials only, like everything waymarkd links.
    .target(
      name: "WaymarkBroker",
      dependencies: ["Waymark", "WaymarkClient", "WaymarkCore", "WaymarkIdentify"]),
    // Who a peer process is, from /proc (pidfds, loopback TCP owners), and the wire of
    // waymark-identify. Glibc only, no Foundation. Its sources but AgentRule's are also the
    // helper's, compiled again for Embedded Swift (`hasFeature(Embedded)`: CHelperLibc for Glibc;
    // paths and /proc text compared as bytes, so that the helper needs no Unicode tables).
    .target(name: "WaymarkIdentify", dependencies: ["CPidfd"]),
    // The privilege-separated helper: holds CAP_SYS_PTRACE so that waymarkd holds none; a pidfd
    // or a loopback TCP socket in, a pid, start time and executable out. Built with Embedded
    // Swift from WaymarkIdentify's sources (linked into Sources/waymark-identify/WaymarkIdentify)
    // so that it carries no Swift runtime and maps glibc alone (libc, libm): 0.12 MB instead
    // of 6.2 (docs/security.md, "Least privilege"; IdentifyHelperTests). Its own
    // settings whatever the build's: no static Swift runtime (`--static-swift-stdlib` would
    // look for the Embedded standard library where the toolchain has none), whole-module (as
    // Embedded Swift requires), unused sections dropped.
    .executableTarget(
      name: "waymark-identify",
      dependencies: ["CHelperLibc"],
      swiftSettings: [
        .enableExperimentalFeature("Embedded"), .unsafeFlags(["-wmo", "-no-static-stdlib"]),
      ],
      linkerSettings: [
        .linkedLibrary("m"), .unsafeFlags(["-no-static-stdlib", "-Xlinker", "--gc-sections"]),
      ]),
    // Argument parsing and the waymark commands: replay runs WaymarkPipeline; `status` and
    // `docs man` read WaymarkDaemonConfiguration; the module depends on no daemon module (the
    // executable `waymark` links both: docs/architecture.md, "One executable").
    // FoundationEssentials only, like the daemon, so that the static `waymark` carries neither
    // Foundation nor ICU (CLIFootprintTests).
    .target(
      name: "WaymarkCLI",
      dependencies: [
        "Waymark", "WaymarkProcess", "WaymarkPipeline", "WaymarkDaemonConfiguration", "NMEA",
        "GPSD", "WaymarkStore", "WaymarkSimulation", "WaymarkClient", "WaymarkMQTT",
        "WaymarkGazetteer",
      ]
    ),
    // The multi-call executable: `waymark` and `waymarkd` (Program: the name it runs under).
    // Released without the dynamic symbol table of its own code, which the static Swift
    // runtime's link would export (`-export-dynamic`) and nothing looks up (0.6 MB; BENCHMARKS.md,
    // "The package").
    // Its release link also lays the functions waymarkd runs once it is up side by side, in the
    // order of code-order.txt (Scripts/code-order.sh writes it): with one section a function in
    // every target (below), they fill a few hundred contiguous pages instead of pages all over
    // the executable, and the daemon's resident code after a drive stays small (BENCHMARKS.md,
    // "Code laid out by use"). gold, named, because the option is gold's.
    .executableTarget(
      name: "waymark",
      dependencies: ["WaymarkCLI", "WaymarkDaemon", "WaymarkDaemonConfiguration"],
      exclude: ["code-order.txt"],
      linkerSettings: [
        .unsafeFlags(
          [
            "-Xlinker", "--no-export-dynamic", "-use-ld=gold", "-Xlinker",
            "--section-ordering-file=\(Context.packageDirectory)/Sources/waymark/code-order.txt",
          ], .when(configuration: .release))
      ]),
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
        "WaymarkBroker", "WaymarkClient", "WaymarkMQTT", "WaymarkProcess", "WaymarkPipeline",
        "WaymarkIdentify", "CEpoll", "WaymarkGazetteer",
      ]
    ),

    .testTarget(name: "WaymarkGazetteerTests", dependencies: ["WaymarkGazetteer", "WaymarkCore"]),
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
    .testTarget(
      name: "WaymarkStoreTests", dependencies: ["WaymarkStore", "WaymarkTesting", "CSQLite"]),
    .testTarget(
      name: "WaymarkMQTTTests", dependencies: ["WaymarkMQTT", "WaymarkCore", "WaymarkStore"]),
    .testTarget(
      name: "WaymarkTraccarTests",
      dependencies: ["WaymarkTraccar", "WaymarkCore"]),
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
        "WaymarkDaemon", "WaymarkPipeline", "WaymarkDaemonConfiguration", "WaymarkCLI",
        "WaymarkSimulation", "WaymarkTesting", "WaymarkStore", "Waymark", "NMEA", "WaymarkBroker",
        "WaymarkMQTT", "WaymarkIdentify", "GPSD", "WaymarkTraccar", "WaymarkProcess",
      ]
    ),
    // Programs written for iOS, compiled against WaymarkCoreLocation with their import
    // replaced, and run against a replayed log.
    .testTarget(
      name: "WaymarkCoreLocationTests",
      dependencies: ["WaymarkCoreLocation", "NMEA", "WaymarkCore", "WaymarkTesting"]),
    .testTarget(
      name: "WaymarkCLITests",
      dependencies: [
        "WaymarkCLI", "WaymarkProcess", "WaymarkPipeline", "WaymarkDaemonConfiguration",
        "WaymarkStore", "NMEA", "WaymarkTesting",
      ]
    ),
  ],
  swiftLanguageModes: [.v6]
)

// Release builds put each function in a section of its own, so that the link can order them
// (the `waymark` target above). Not the helper, which has its own settings.
for target in package.targets
where (target.type == .regular || target.type == .executable) && target.name != "waymark-identify" {
  target.swiftSettings =
    (target.swiftSettings ?? []) + [
      .unsafeFlags(["-Xfrontend", "-function-sections"], .when(configuration: .release))
    ]
}
