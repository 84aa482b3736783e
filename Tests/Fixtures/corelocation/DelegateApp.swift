// A delegate-based app as Apple's "Requesting authorization to use location services",
// "Configuring your app to use location services", "Monitoring the user's proximity to
// geographic regions" and "Getting the user's location" pages write it: authorization in
// locationManagerDidChangeAuthorization, standard updates with a distance filter, a one-shot
// request, a circular region, visits and significant changes. Compiled with only the import
// line changed; each callback prints one line, in the order it comes.
import CoreLocation
import Foundation

final class Tracker: NSObject, CLLocationManagerDelegate {
  let manager = CLLocationManager()
  let home = CLCircularRegion(
    center: CLLocationCoordinate2D(latitude: 52.52, longitude: 13.405), radius: 100,
    identifier: "home")
  var updates = 0
  var started = false

  func start() {
    manager.delegate = self
    manager.desiredAccuracy = kCLLocationAccuracyBest
    manager.distanceFilter = kCLDistanceFilterNone
    manager.activityType = .automotiveNavigation
    manager.pausesLocationUpdatesAutomatically = false
    manager.allowsBackgroundLocationUpdates = true
    print("heading \(CLLocationManager.headingAvailable())")
    print("ranging \(CLLocationManager.isRangingAvailable())")
    print("circles \(CLLocationManager.isMonitoringAvailable(for: CLCircularRegion.self))")
  }

  func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
    print("authorization \(manager.authorizationStatus)")
    switch manager.authorizationStatus {
    case .notDetermined:
      manager.requestWhenInUseAuthorization()
    case .authorizedWhenInUse, .authorizedAlways:
      guard !started else { return }
      started = true
      manager.requestLocation()
      home.notifyOnEntry = true
      home.notifyOnExit = true
      manager.startMonitoring(for: home)
      manager.requestState(for: home)
      manager.startMonitoringVisits()
      manager.startMonitoringSignificantLocationChanges()
      manager.startUpdatingHeading()
      manager.startUpdatingLocation()
    case .denied, .restricted:
      print("denied")
      exit(0)
    @unknown default:
      break
    }
  }

  func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
    guard let location = locations.last else { return }
    updates += 1
    if updates == 1 {
      print(
        "first accuracy \(location.horizontalAccuracy >= 0) speedValid \(location.speed >= 0)"
          + " simulated \(location.sourceInformation?.isSimulatedBySoftware == true)")
    }
  }

  func locationManager(_ manager: CLLocationManager, didFailWithError error: Error) {
    if let error = error as? CLError, error.code == .locationUnknown {
      print("failure locationUnknown")
      print("updates \(updates)")
      exit(0)
    }
    print("failure \(error)")
  }

  func locationManager(_ manager: CLLocationManager, didStartMonitoringFor region: CLRegion) {
    print("monitoring \(region.identifier)")
  }

  func locationManager(
    _ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion
  ) {
    switch state {
    case .inside: print("state \(region.identifier) inside")
    case .outside: print("state \(region.identifier) outside")
    case .unknown: print("state \(region.identifier) unknown")
    @unknown default: break
    }
  }

  func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion) {
    print("enter \(region.identifier)")
  }

  func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion) {
    print("exit \(region.identifier)")
  }

  func locationManager(_ manager: CLLocationManager, didVisit visit: CLVisit) {
    if visit.departureDate == Date.distantFuture {
      print("visit arrived")
    } else {
      print("visit departed \(Int(visit.departureDate.timeIntervalSince(visit.arrivalDate)))")
    }
  }

  func locationManager(_ manager: CLLocationManager, didUpdateHeading newHeading: CLHeading) {
    print("heading update")
  }
}

let tracker = Tracker()
tracker.start()
dispatchMain()
