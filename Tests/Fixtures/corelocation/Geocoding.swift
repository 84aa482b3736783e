// Geocoding as Apple's "Converting between coordinates and user-friendly place names" page and
// CLGeocoder's reference describe it: the current location from a one-shot request, turned
// into a placemark with a completion handler; an address turned into a coordinate; the
// async variant; a location with nothing near it; a cancelled request. Compiled with only the
// import line changed; each answer prints one line.
import CoreLocation

final class PlaceNamer: NSObject, CLLocationManagerDelegate {
  let manager = CLLocationManager()
  let geocoder = CLGeocoder()

  func start() {
    manager.delegate = self
    manager.desiredAccuracy = kCLLocationAccuracyHundredMeters
  }

  func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
    switch manager.authorizationStatus {
    case .notDetermined:
      manager.requestWhenInUseAuthorization()
    case .authorizedWhenInUse, .authorizedAlways:
      manager.requestLocation()
    default:
      print("denied")
      exit(0)
    }
  }

  func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
    guard let location = locations.last else { return }
    lookUpCurrentLocation(location) { placemark in
      guard let placemark else {
        print("current none")
        exit(1)
      }
      let zone = placemark.timeZone?.identifier ?? "-"
      print(
        "current \(placemark.locality ?? "-") \(placemark.subLocality ?? "-")"
          + " \(placemark.isoCountryCode ?? "-")"
          + " \(placemark.country ?? "-") \(zone)")
      self.findCoordinate(of: "Zurich, Switzerland")
    }
  }

  func locationManager(_ manager: CLLocationManager, didFailWithError error: Error) {
    print("location error \(error)")
    exit(1)
  }

  func lookUpCurrentLocation(_ location: CLLocation, completion: @escaping (CLPlacemark?) -> Void) {
    print("geocoding \(geocoder.isGeocoding)")
    geocoder.reverseGeocodeLocation(location) { placemarks, error in
      dispatchPrecondition(condition: .onQueue(.main))
      if error == nil {
        completion(placemarks?.first)
      } else {
        completion(nil)
      }
    }
    print("geocoding \(geocoder.isGeocoding)")
  }

  func findCoordinate(of address: String) {
    geocoder.geocodeAddressString(address) { placemarks, error in
      guard error == nil, let location = placemarks?.first?.location else {
        print("address none")
        exit(1)
      }
      let latitude = (location.coordinate.latitude * 100).rounded() / 100
      let longitude = (location.coordinate.longitude * 100).rounded() / 100
      print("address \(placemarks?.first?.name ?? "-") \(latitude) \(longitude)")
      self.askTheOcean()
    }
  }

  func askTheOcean() {
    let atlantic = CLLocation(latitude: 0, longitude: -30)
    geocoder.reverseGeocodeLocation(atlantic) { placemarks, error in
      if let error = error as? CLError, error.code == .geocodeFoundNoResult {
        print("ocean geocodeFoundNoResult \(placemarks == nil)")
      } else {
        print("ocean \(placemarks?.first?.name ?? "-")")
      }
      self.cancelOne()
    }
  }

  func cancelOne() {
    geocoder.geocodeAddressString("Berlin") { placemarks, error in
      if let error = error as? CLError, error.code == .geocodeCanceled {
        print("cancelled \(placemarks == nil)")
      } else {
        print("not cancelled")
      }
      Task { await lookUpNewYork() }
    }
    geocoder.cancelGeocode()
  }
}

func lookUpNewYork() async {
  let geocoder = CLGeocoder()
  do {
    let placemarks = try await geocoder.reverseGeocodeLocation(
      CLLocation(latitude: 40.7128, longitude: -74.006))
    let first = placemarks.first
    print("async \(first?.locality ?? "-") \(first?.administrativeArea ?? "-")")
  } catch {
    print("async error \(error)")
  }
  exit(0)
}

let namer = PlaceNamer()
namer.start()
dispatchMain()
