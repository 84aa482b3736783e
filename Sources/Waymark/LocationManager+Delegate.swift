import FoundationEssentials
import WaymarkCore

// The delegate: fed by the events stream, one event at a time, in order.
extension LocationManager {
  func startDelegatePump(
    first: LocationManagerEvent, _ events: AsyncStream<LocationManagerEvent>
  ) -> Task<Void, Never> {
    // Holds the manager only while dispatching one event, never while waiting.
    Task { [weak self] in
      self?.dispatch(first)
      for await event in events {
        guard let manager = self else { return }
        manager.dispatch(event)
      }
    }
  }

  func dispatch(_ event: LocationManagerEvent) {
    guard let delegate else { return }
    switch event {
    case .location(let location):
      delegate.locationManager(self, didUpdateLocations: [location])
    case .authorization(let authorization):
      delegate.locationManager(self, didChangeAuthorization: authorization)
    case .health(let health):
      delegate.locationManager(self, didChangeHealth: health)
    case .failure(let error):
      delegate.locationManager(self, didFailWithError: error)
    }
  }
}
