// The iOS 17/18 idiom as Apple's documentation writes it: a CLServiceSession whose diagnostics
// are read, a CLMonitor with a circular condition, a beacon condition and a full switch on the
// event state with the iOS 18 diagnoses, and a liveUpdates loop reading the update's diagnoses
// and comparing location fields. Compiled with only the import line changed.
import CoreLocation

@main
struct LiveUpdates {
  static func main() async throws {
    let session = CLServiceSession(authorization: .whenInUse)
    for await diagnostic in session.diagnostics {
      print("session denied=\(diagnostic.authorizationDenied)")
      break
    }

    let home = CLLocationCoordinate2D(latitude: 52.52, longitude: 13.405)
    let monitor = await CLMonitor("corelocation-fixture")
    await monitor.add(
      CLMonitor.CircularGeographicCondition(center: home, radius: 100), identifier: "home",
      assuming: .unsatisfied)
    await monitor.add(
      CLMonitor.BeaconIdentityCondition(uuid: UUID()), identifier: "beacon")
    let events = Task {
      for try await event in await monitor.events {
        let started = Date()
        _ = started
        switch event.state {
        case .satisfied:
          print("event \(event.identifier) satisfied")
        case .unsatisfied:
          print("event \(event.identifier) unsatisfied")
        case .unknown:
          print("event \(event.identifier) unknown")
        case .unmonitored:
          print(
            "event \(event.identifier) unmonitored unsupported=\(event.conditionUnsupported)"
              + " persistence=\(event.persistenceUnavailable)")
        @unknown default:
          print("event \(event.identifier) other")
        }
        if event.authorizationDenied || event.authorizationDeniedGlobally
          || event.authorizationRestricted || event.authorizationRequestInProgress
          || event.insufficientlyInUse || event.accuracyLimited || event.conditionLimitExceeded
          || event.persistenceUnavailable || event.serviceSessionRequired
        {
          print("diagnosis \(event.identifier)")
        }
        if event.refinement != nil { print("refinement \(event.identifier)") }
      }
    }

    var count = 0
    var accurate = 0
    var invalidSpeed = 0
    for try await update in CLLocationUpdate.liveUpdates(.fitness) {
      if update.authorizationDenied || update.authorizationRestricted { print("denied") }
      guard let location = update.location else { continue }
      count += 1
      if location.horizontalAccuracy < 50 && location.horizontalAccuracy >= 0 { accurate += 1 }
      if location.speed < 0 { invalidSpeed += 1 }
    }
    try await events.value
    print("locations \(count) accurate \(accurate) invalidSpeed \(invalidSpeed)")
    _ = session
  }
}

extension CLLocationUpdate.LiveConfiguration {
  var label: String {
    switch self {
    case .default: "default"
    case .automotiveNavigation: "automotive"
    case .otherNavigation: "other"
    case .fitness: "fitness"
    case .airborne: "airborne"
    @unknown default: "unknown"
    }
  }
}
