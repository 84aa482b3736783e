import FoundationEssentials
import WaymarkCore

/// Visits from any sequence of locations, like `CLLocationManager.startMonitoringVisits`:
/// where the device stayed, found by a ``StayDetector`` on fix time, with no place declared.
///
/// ```swift
/// let monitor = VisitMonitor(places: places)          // places name the stays inside them
/// for await visit in monitor.visits(of: manager.locations) {
///   if let left = visit.departureDate {
///     print("left \(visit.placeID ?? "somewhere") at \(left)")
///   } else {
///     print("arrived at \(visit.arrivalDate), ±\(visit.horizontalAccuracy) m")
///   }
/// }
/// ```
///
/// Each stay comes twice: when it opens (`Stay.departureDate` `nil`, arrival back-dated to
/// its first fix) and when it closes (departure: its last fix inside). Times are fix times,
/// never the clock: the same locations always give the same visits.
public struct VisitMonitor: Sendable {
  /// The detection settings (`visit-min-duration` is ``StayDetector/Configuration/minimumDurationSeconds``).
  public var configuration: StayDetector.Configuration
  /// Declared places: a stay whose centre lies in one names it (`Stay.place(in:)`).
  public var places: [Place]

  /// Creates a monitor; every parameter has the detector's defaults.
  public init(configuration: StayDetector.Configuration = .init(), places: [Place] = []) {
    self.configuration = configuration
    self.places = places
  }

  /// The visits in `locations`, in order: each stay when it opens and when it closes. At the
  /// end of the locations a stay the device had left is closed; the one it is in stays open
  /// (it came when it opened).
  public func visits(in locations: some Sequence<Location>) -> [Stay] {
    var detector = StayDetector(configuration: configuration)
    var visits: [Stay] = []
    for location in locations { visits += detector.process(location).map(named) }
    return visits + detector.finish().map(named)
  }

  /// The visits of `locations` as they come (see ``visits(in:)``); the stream ends when the
  /// locations do, and iterating it no longer stops reading them.
  public func visits<Locations: AsyncSequence & Sendable>(of locations: Locations)
    -> AsyncStream<Stay>
  where Locations.Element == Location, Locations.Failure == Never {
    let (stream, continuation) = AsyncStream.makeStream(of: Stay.self)
    let task = Task { [self] in
      var detector = StayDetector(configuration: configuration)
      for await location in locations {
        for event in detector.process(location) { continuation.yield(named(event)) }
      }
      for event in detector.finish() { continuation.yield(named(event)) }
      continuation.finish()
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  private func named(_ event: StayDetector.Event) -> Stay {
    var stay = event.stay
    stay.placeID = stay.place(in: places)?.id
    return stay
  }
}
