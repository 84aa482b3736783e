// location-app: a small application on Waymark, built as a package of its own.
//
//   location-app replay <log.nmea>        every location of an NMEA log, then exit
//   location-app gpsd [host[:port[:dev]]] live locations from gpsd (localhost:2947 by default)
//   location-app daemon [<socket>]        through waymarkd's socket (the daemon enforces the grant)
//
// Each location is one line on stdout: fix time, latitude, longitude (degrees, 9 decimals, as
// `waymark replay --fixes` writes them) and horizontal accuracy in metres (`-` when unknown).
// Exit codes as waymark's: 0 ok, 64 usage, 66 unreadable log, 69 service unavailable,
// 77 not authorized.
import Foundation
import GPSD
import NMEA
import Waymark

@main
enum LocationApp {
  /// The id this application's grants are recorded under.
  static let clientID = "org.example.location-app"

  static let usage = """
    Usage: location-app replay <log.nmea>
           location-app gpsd [host[:port[:device]]]
           location-app daemon [<socket>]
    """

  static func main() async {
    let arguments = Array(CommandLine.arguments.dropFirst())
    let status: Int32
    switch (arguments.first, arguments.count) {
    case ("-h", 1), ("--help", 1):
      print(usage)
      status = 0
    case ("replay", 2):
      status = await replay(path: arguments[1])
    case ("gpsd", 1), ("gpsd", 2):
      status = await gpsd(endpoint: arguments.count == 2 ? arguments[1] : "localhost:2947")
    case ("daemon", 1), ("daemon", 2):
      status = await daemon(
        socket: arguments.count == 2 ? arguments[1] : BrokerConnection.defaultPath)
    default:
      fail("Error: expected one of the forms below\n\(usage)\nSee 'location-app --help'.")
      status = 64
    }
    exit(status)
  }

  // MARK: Over an NMEA log

  /// Prints every location of the log at `path` as fast as it decodes, then returns.
  ///
  /// The grant is explicit and in memory: a replay asks nobody and records nothing.
  static func replay(path: String) async -> Int32 {
    guard FileManager.default.isReadableFile(atPath: path) else {
      fail("location-app: cannot read \(path)")
      return 66
    }
    var locations = startReplay(path: path)
    while let location = await locations.next() {
      write(line(location))
    }
    return 0
  }

  /// Starts a manager on the log at `path` and returns a subscription to its locations, which
  /// ends after the last one.
  ///
  /// The manager's streams go on after its source ends (a live source may come back); releasing
  /// the manager finishes them once they have delivered what they hold. So only a task that
  /// waits for the end of the log keeps the manager.
  static func startReplay(path: String) -> Broadcast<Location>.Updates.AsyncIterator {
    let center = AuthorizationCenter(
      store: InMemoryGrantStore([Grant(clientID: clientID, level: .whenInUse, grantedAt: Date())]),
      services: .enabled)
    let (logEnded, end) = AsyncStream.makeStream(of: Never.self)
    let source = NMEAReplay.source(path: path).onEnd { end.finish() }
    let manager = LocationManager(clientID: clientID, source: source, authorization: center)
    // Subscribed before the start, with room for every location: the replay runs at full speed
    // and must not outrun the printing.
    let locations = manager.locations(bufferingNewest: Int.max).makeAsyncIterator()
    manager.startUpdatingLocation()
    Task {
      for await _ in logEnded {}
      withExtendedLifetime(manager) {}
    }
    return locations
  }

  // MARK: Through gpsd

  /// Prints live locations from the gpsd at `endpoint` until interrupted.
  ///
  /// Authorization as an application has it: the shared center reads the grant in the state
  /// directory (`waymark auth grant org.example.location-app whenInUse --state-dir …`), or asks
  /// on a terminal; without a terminal, it denies.
  static func gpsd(endpoint text: String) async -> Int32 {
    guard let endpoint = GPSDEndpoint(parsing: text) else {
      fail("Error: not a gpsd address: \(text)\n\(usage)")
      return 64
    }
    let gpsd = GPSDSource(configuration: GPSDConfiguration(endpoint: endpoint))
    let manager = LocationManager(
      clientID: clientID, source: gpsd.fixSource, purpose: "print this machine's locations")
    let status = await manager.requestWhenInUseAuthorization()
    guard status.isAuthorized else {
      var hint = "waymark auth grant \(clientID) whenInUse"
      if let file = manager.authorization.store as? FileGrantStore {
        hint += " --state-dir \(file.directory.path)"
      }
      fail("location-app: not authorized (\(status.rawValue)); grant with: \(hint)")
      return 77
    }
    // Health goes to stderr; an unreachable gpsd never ends the location stream, the source
    // reconnects by itself.
    let health = Task {
      for await report in manager.healthUpdates {
        fail("gpsd \(endpoint): \(report.service), device \(report.device ?? "none")")
      }
    }
    defer { health.cancel() }
    manager.startUpdatingLocation()
    for await location in manager.locations {
      write(line(location))
    }
    return 0
  }

  // MARK: Through the daemon

  /// Locations from waymarkd over its socket: the daemon names this process (`<user>:<exe>`),
  /// decides its authorization (asking an agent of this user when there is no grant) and sends
  /// only what the grant allows.
  static func daemon(socket: String) async -> Int32 {
    let service: DaemonLocationService
    do {
      service = try await DaemonLocationService(socketPath: socket)
    } catch {
      fail("location-app: \(error)")
      return 69
    }
    let manager = service.makeManager()
    let status = await manager.requestWhenInUseAuthorization()
    guard status.isAuthorized else {
      fail(
        "location-app: not authorized (\(status.rawValue)); grant with: "
          + "sudo waymark auth grant '\(service.clientID)' whenInUse --store <the daemon's store>")
      return 77
    }
    manager.startUpdatingLocation()
    for await location in manager.locations {
      write(line(location))
    }
    return 0
  }

  // MARK: Output

  /// `time latitude longitude accuracy`, such as
  /// `2026-11-29T07:50:00.000Z 45.760385300 4.835903800 6.0`.
  static func line(_ location: Location) -> String {
    let accuracy = location.horizontalAccuracy.map { $0.fixed(1) } ?? "-"
    return "\(Timestamp.format(location.timestamp)) \(location.coordinate.latitude.fixed(9)) "
      + "\(location.coordinate.longitude.fixed(9)) \(accuracy)"
  }

  /// Writes `text` and a newline to stdout at once (`print` is block-buffered off a terminal).
  static func write(_ text: String) {
    FileHandle.standardOutput.write(Data((text + "\n").utf8))
  }

  /// Writes `text` and a newline to stderr.
  static func fail(_ text: String) {
    FileHandle.standardError.write(Data((text + "\n").utf8))
  }
}
