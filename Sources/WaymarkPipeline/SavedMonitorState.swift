import FoundationEssentials
import Waymark
import WaymarkStore

/// The place monitor's state as the store keeps it (one JSON text per place that is not idle,
/// plus the last fix), shared by waymarkd and `waymark replay --store` so that either can resume
/// what the other saved.
package enum SavedMonitorState {
  /// The stored text of one place's state (JSON, sorted keys, numbers exact: see
  /// `PlaceMonitor.State.json`). A number JSON cannot hold is written `null`: the text then
  /// does not read back, and the place starts outside, as before.
  package static func encode(_ state: PlaceMonitor.State) -> String {
    state.json.string
  }

  /// The snapshot to resume from.
  ///
  /// - Parameters:
  ///   - entries: the saved states by place id.
  ///   - lastFix: the last fix the states reflect; it becomes the monitor's previous sample.
  ///   - assumedAccuracyMeters: the accuracy of a last fix saved without one.
  ///   - unreadable: called with the id of each place whose text does not decode; it starts
  ///     outside.
  package static func snapshot(
    entries: [String: MonitorStateRepository.Entry], lastFix: MonitorStateRepository.LastFix?,
    assumedAccuracyMeters: Double, unreadable: (String) -> Void = { _ in }
  ) -> PlaceMonitor.Snapshot {
    var snapshot = PlaceMonitor.Snapshot()
    for (placeID, entry) in entries {
      do {
        snapshot.places[placeID] = try PlaceMonitor.State(jsonText: entry.snapshot)
      } catch {
        unreadable(placeID)
      }
    }
    if let lastFix {
      snapshot.previous = PlaceMonitor.Sample(
        time: lastFix.time, coordinate: lastFix.coordinate,
        accuracyMeters: lastFix.horizontalAccuracyMeters ?? assumedAccuracyMeters)
    }
    return snapshot
  }

  /// What to save: the state of every place in `current` (the places that are not idle), and
  /// `outside` for each place of `previouslySaved` that has become idle since.
  package static func entries(
    current: [String: PlaceMonitor.State], previouslySaved: some Sequence<String>
  ) -> [String: String] {
    var entries: [String: String] = [:]
    for (placeID, state) in current { entries[placeID] = encode(state) }
    for placeID in previouslySaved where current[placeID] == nil {
      entries[placeID] = encode(.outside)
    }
    return entries
  }
}
