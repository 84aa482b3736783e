import Foundation
import Waymark
import WaymarkCore
import WaymarkService
import WaymarkStore

/// The place side of `waymark replay --places/--store`: a `PlaceMonitor` fed with every usable
/// fix, its events printed as NDJSON and, with a store, recorded as visits.
///
/// Resuming: the store keeps the monitor's state and the last fix. When a replayed log starts
/// after that last fix (the next log of a device), the saved state is restored, so a visit open
/// at the end of one log is closed by the next. When it starts at or before it (the same log
/// again, say after a crash), the replay starts fresh: it produces the same events, and the
/// store records each transition once (visits are unique on place and arrival).
final class ReplayPlaceSession {
  let monitor: PlaceMonitor
  private let recorder: VisitRecorder?
  private let database: Database?
  private let savedStates: [String: MonitorStateRepository.Entry]
  private let savedLastFix: MonitorStateRepository.LastFix?
  private var decidedResume = false
  private(set) var resumed = false
  private(set) var arrivals = 0
  private(set) var departures = 0
  private(set) var newTransitions = 0

  /// Loads the places (from the file, and/or the store) and opens the store.
  init(placesPath: String?, storePath: String?, source: String) throws {
    var places: [Place] = []
    if let placesPath {
      guard let data = FileManager.default.contents(atPath: placesPath) else {
        throw CommandError("cannot read '\(placesPath)'", code: .noInput)
      }
      do {
        places = try PlaceCollection.decode(data)
      } catch {
        throw CommandError("\(placesPath): \(error)", code: .dataError)
      }
    }
    if let storePath {
      let database = try StorePath.open(storePath, create: true)
      do {
        if !places.isEmpty {
          try database.write { _ = try PlaceRepository($0).upsert(places) }
        }
        (places, savedStates, savedLastFix) = try database.read { connection in
          let states = MonitorStateRepository(connection)
          return (try PlaceRepository(connection).all(), try states.all(), try states.lastFix())
        }
        recorder = try VisitRecorder(database: database, source: source)
      } catch {
        throw StorePath.commandError(error)
      }
      self.database = database
    } else {
      database = nil
      recorder = nil
      savedStates = [:]
      savedLastFix = nil
    }
    if places.isEmpty {
      throw CommandError(
        "no places to monitor: give --places <geojson>, or a --store that has places",
        code: .dataError)
    }
    monitor = PlaceMonitor(places: places)
  }

  /// Feeds one fix; appends its events as NDJSON lines to `output`.
  func process(_ fix: Fix, output: inout [UInt8]) throws {
    guard let location = Location(fix) else { return }
    if !decidedResume {
      decidedResume = true
      resumeIfLater(than: location.timestamp)
    }
    recorder?.observe(fix)
    for event in monitor.process(location) {
      switch event {
      case .arrival: arrivals += 1
      case .departure: departures += 1
      }
      let line = event.jsonLine()
      line.write(to: &output)
      if let recorder {
        let state = monitor.state(for: event.placeID).map(SavedMonitorState.encode)
        do {
          if try recorder.record(event, snapshot: state) { newTransitions += 1 }
        } catch {
          throw StorePath.commandError(error)
        }
      }
    }
  }

  /// Saves the monitor's state and pending counts.
  func finish() throws {
    guard let recorder else { return }
    let snapshots = SavedMonitorState.entries(
      current: monitor.snapshot().places, previouslySaved: savedStates.keys)
    do {
      try recorder.saveSnapshots(snapshots)
    } catch {
      throw StorePath.commandError(error)
    }
  }

  private func resumeIfLater(than time: Date) {
    guard let last = savedLastFix, time > last.time else { return }
    monitor.restore(
      SavedMonitorState.snapshot(
        entries: savedStates, lastFix: last,
        assumedAccuracyMeters: monitor.configuration.assumedAccuracyMeters))
    resumed = true
  }

  /// Events so far.
  var eventCount: Int { arrivals + departures }

  /// One line for the replay summary.
  var summary: String {
    var text = "events: \(arrivals + departures) (arrivals \(arrivals), departures \(departures))"
    if recorder != nil {
      text += "; store: \(newTransitions) new transitions"
      if resumed { text += ", resumed from the saved state" }
    }
    return text + "\n"
  }
}
