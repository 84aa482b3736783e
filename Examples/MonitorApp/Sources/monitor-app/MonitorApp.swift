// monitor-app: two circles watched by a Monitor (CLMonitor's model) that outlives the program.
//
//   monitor-app <log.nmea>    the log's locations through the monitor, then exit
//
// The monitor is saved under its name in $XDG_STATE_HOME/waymark/monitors (else
// ~/.local/state/waymark/monitors): a second run goes on where the first stopped. The program
// prints the records it starts from, then each event, one line each:
//
//   record home unsatisfied -                    (no fix yet: the state assumed when added)
//   event home satisfied 2026-11-29T07:50:00.000Z
//
// Exit codes: 0 ok, 64 usage, 66 unreadable log, 73 the monitor cannot be opened (its name is
// in use by another run, or its directory is not writable).
import Foundation
import NMEA
import Waymark

@main
struct MonitorApp {
  static let home = Coordinate(latitude: 45.7600, longitude: 4.8300)
  static let office = Coordinate(latitude: 45.7700, longitude: 4.8450)

  static func main() async {
    let arguments = Array(CommandLine.arguments.dropFirst())
    guard arguments.count == 1, !arguments[0].hasPrefix("-") else {
      let help = arguments == ["-h"] || arguments == ["--help"]
      let usage = "Usage: monitor-app <log.nmea>"
      if help { print(usage) } else { fail("Error: expected one log\n\(usage)") }
      exit(help ? 0 : 64)
    }
    let path = arguments[0]
    guard FileManager.default.isReadableFile(atPath: path) else {
      fail("monitor-app: cannot read \(path)")
      exit(66)
    }
    do {
      try await run(locations: NMEAReplay.source(path: path).fixes().compactMap(Location.init))
    } catch let error as MonitorError {
      fail("monitor-app: \(error)")
      exit(73)
    } catch {
      fail("monitor-app: \(error)")
      exit(1)
    }
  }

  /// What an iOS 17 app does with `CLMonitor`, the locations aside (on iOS they come from the
  /// system; here from the log).
  static func run(
    locations: some AsyncSequence<Location, Never> & Sendable
  ) async throws {
    let monitor = try await Monitor(named: "monitor-app", locations: locations)

    // Conditions persist with the monitor: add them on the first run only.
    if await monitor.record(for: "home") == nil {
      await monitor.add(
        Monitor.CircularGeographicCondition(center: home, radius: 100), identifier: "home",
        assuming: .unsatisfied)
    }
    if await monitor.record(for: "office") == nil {
      await monitor.add(
        Monitor.CircularGeographicCondition(center: office, radius: 150), identifier: "office",
        assuming: .unsatisfied)
    }

    for identifier in await monitor.identifiers {
      guard let record = await monitor.record(for: identifier) else { continue }
      let event = record.lastEvent
      write("record \(identifier) \(event.state) \(time(event.date))")
    }

    for try await event in await monitor.events {
      write("event \(event.identifier) \(event.state) \(time(event.date))")
    }
    try await monitor.close()
  }

  /// The date as `waymark` writes times, or `-` for none yet.
  static func time(_ date: Date) -> String {
    date == .distantPast ? "-" : Timestamp.format(date)
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
