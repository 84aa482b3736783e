// live-app: the iOS 17 location idiom, unchanged but for its import. Live updates in a loop, and
// a monitor with two circles that outlives the program: a second run starts from the records the
// first one left.
//
// Where the locations come from is the environment's business, not the program's: waymarkd when
// its socket answers, else gpsd; WAYMARK_SOCKET=<path> names another socket, and
// WAYMARK_SIMULATED_LOG=<file.nmea> replays a log instead (as Xcode simulates a location).
// Output, one line each:
//
//   record home unsatisfied              the monitor's records at the start
//   event home satisfied <ISO 8601>      each monitor event
//   stationary true <ISO 8601>           each change of the stationary diagnosis
//   locations 212                        when the updates end (the log's end), the count
import Foundation
import WaymarkCoreLocation  // iOS: import CoreLocation

@main
struct LiveApp {
  static let home = CLLocationCoordinate2D(latitude: 52.52, longitude: 13.405)
  static let office = CLLocationCoordinate2D(latitude: 52.52, longitude: 13.419_77)

  static func main() async throws {
    let monitor = await CLMonitor("live-app")
    // Conditions persist with the monitor: added on the first run only.
    if await monitor.record(for: "home") == nil {
      await monitor.add(
        CLMonitor.CircularGeographicCondition(center: home, radius: 100), identifier: "home",
        assuming: .unsatisfied)
    }
    if await monitor.record(for: "office") == nil {
      await monitor.add(
        CLMonitor.CircularGeographicCondition(center: office, radius: 100),
        identifier: "office", assuming: .unsatisfied)
    }
    for identifier in await monitor.identifiers {
      if let record = await monitor.record(for: identifier) {
        say("record \(identifier) \(record.lastEvent.state)")
      }
    }
    let events = Task {
      for try await event in await monitor.events {
        say("event \(event.identifier) \(event.state) \(event.date.ISO8601Format())")
      }
    }

    var count = 0
    var stationary = false
    for try await update in CLLocationUpdate.liveUpdates(.automotiveNavigation) {
      guard let location = update.location else { continue }
      count += 1
      if update.isStationary != stationary {
        stationary = update.isStationary
        say("stationary \(stationary) \(location.timestamp.ISO8601Format())")
      }
    }
    try await events.value
    say("locations \(count)")
  }

  /// Writes `line` to standard output at once (`print` buffers when the output is a pipe).
  static func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
  }
}
