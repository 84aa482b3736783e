import FoundationEssentials
import Waymark
import WaymarkCore
import WaymarkStore

/// Where a ``StayRecorder`` finds the declared place a stay lies in: among the places whose
/// circle holds the stay's centre, the one whose centre is nearest (``Stay/place(in:)``).
///
/// A replay hands it its list of places; the daemon its place monitor's index and the store,
/// so that it keeps no second copy of a million places.
package struct StayPlaces {
  /// The id of the place a stay lies in, or `nil`.
  let placeID: (Stay) -> String?
  /// The place with an id, as it is now, or `nil`.
  let place: (String) -> Place?

  /// The places of a list, in its order (the first on a tie).
  package static func list(_ places: [Place]) -> StayPlaces {
    StayPlaces(
      placeID: { $0.place(in: places)?.id },
      place: { id in places.first { $0.id == id } })
  }

  /// The places a monitor watches, found through its index, each read from `database` when a
  /// stay names it.
  ///
  /// - Parameters:
  ///   - monitor: the monitor, asked when a stay begins or ends (it may be replaced on a
  ///     reload, hence a function).
  ///   - database: the store the monitor's places came from.
  package static func monitored(
    by monitor: @escaping () -> PlaceMonitor, in database: Database
  ) -> StayPlaces {
    StayPlaces(
      placeID: { monitor().nearestPlaceID(containing: $0.coordinate) },
      place: { id in try? database.read { try PlaceRepository($0).place(id: id) } })
  }
}
