import Foundation
import Waymark
import WaymarkCore
import WaymarkService
import WaymarkStore

/// The place side of `waymark replay --places/--store`: the same ``VisitTracker`` as `waymarkd`
/// (monitor, recorder, saved state, one resume policy) fed with every fix, its events printed
/// as NDJSON.
final class ReplayPlaceSession {
  private let tracker: VisitTracker
  private let hasStore: Bool
  private(set) var arrivals = 0
  private(set) var departures = 0
  private(set) var newTransitions = 0

  /// The monitor.
  var monitor: PlaceMonitor { tracker.monitor }

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
    var database: Database?
    if let storePath {
      let opened = try StorePath.open(storePath, create: true)
      do {
        if !places.isEmpty {
          try opened.write { _ = try PlaceRepository($0).upsert(places) }
        }
        places = try opened.read { try PlaceRepository($0).all() }
      } catch {
        throw StorePath.commandError(error)
      }
      database = opened
    }
    if places.isEmpty {
      throw CommandError(
        "no places to monitor: give --places <geojson>, or a --store that has places",
        code: .dataError)
    }
    do {
      tracker = try VisitTracker(places: places, database: database, source: source)
    } catch {
      throw StorePath.commandError(error)
    }
    hasStore = database != nil
  }

  /// Feeds one fix; appends its events as NDJSON lines to `output`.
  func process(_ fix: Fix, output: inout [UInt8]) throws {
    for outcome in tracker.process(fix) {
      switch outcome.event {
      case .arrival: arrivals += 1
      case .departure: departures += 1
      }
      outcome.event.jsonLine().write(to: &output)
      if let failure = outcome.failure { throw StorePath.commandError(failure) }
      if hasStore && outcome.isNew { newTransitions += 1 }
    }
  }

  /// Saves the monitor's state and pending counts.
  func finish() throws {
    do {
      try tracker.save()
    } catch {
      throw StorePath.commandError(error)
    }
  }

  /// Events so far.
  var eventCount: Int { arrivals + departures }

  /// One line for the replay summary.
  var summary: String {
    var text = "events: \(arrivals + departures) (arrivals \(arrivals), departures \(departures))"
    if hasStore {
      text += "; store: \(newTransitions) new transitions"
      if tracker.resumed { text += ", resumed from the saved state" }
    }
    return text + "\n"
  }
}
