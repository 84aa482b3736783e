import Foundation
import Testing
import WaymarkCoreLocation

/// `CLGeocoder` in process: requests from many tasks at once (each answered once, on the main
/// queue), a cancellation racing them, and the answers' fields.
@Suite struct CLGeocoderTests {
  @Test func concurrentRequestsAreEachAnsweredOnceWhileCancellationsRace() async throws {
    let geocoder = CLGeocoder()
    let places = [
      (47.3769, 8.5417, "Zürich"), (52.52, 13.405, "Berlin"), (40.7128, -74.006, "New York City"),
      (-33.8688, 151.2093, "Sydney"),
    ]
    // 64 requests from 8 tasks, while the main test cancels now and then: every request ends
    // once, with its town or with geocodeCanceled.
    let outcomes = try await withThrowingTaskGroup(of: [String].self) { group in
      for worker in 0..<8 {
        group.addTask {
          var seen: [String] = []
          for round in 0..<8 {
            let (latitude, longitude, _) = places[(worker + round) % places.count]
            do {
              let placemarks = try await geocoder.reverseGeocodeLocation(
                CLLocation(latitude: latitude, longitude: longitude))
              seen.append(placemarks.first?.locality ?? "none")
            } catch let error as CLError where error.code == .geocodeCanceled {
              seen.append("canceled")
            }
          }
          return seen
        }
      }
      group.addTask {
        for _ in 0..<8 {
          geocoder.cancelGeocode()
          try await Task.sleep(for: .milliseconds(1))
        }
        return []
      }
      return try await group.reduce(into: []) { $0 += $1 }
    }
    #expect(outcomes.count == 64)
    let towns = Set(places.map(\.2))
    #expect(outcomes.allSatisfy { towns.contains($0) || $0 == "canceled" }, "\(outcomes)")
    #expect(outcomes.contains { towns.contains($0) })
    #expect(!geocoder.isGeocoding)
  }

  @Test func aPlacemarkHasItsTownCountryZoneAndRegion() async throws {
    let placemark = try #require(
      try await CLGeocoder().reverseGeocodeLocation(
        CLLocation(latitude: 37.7749, longitude: -122.4194)
      )
      .first)
    #expect(placemark.locality == "San Francisco" && placemark.administrativeArea == "CA")
    #expect(placemark.isoCountryCode == "US" && placemark.country == "United States")
    #expect(placemark.timeZone?.identifier == "America/Los_Angeles")
    let region = try #require(placemark.region as? CLCircularRegion)
    #expect(region.radius == CLGeocoder.localityRadius)
    #expect(CLPlacemark(placemark: placemark).locality == "San Francisco")
    // A point 100 km from any town of the table: the country alone (the Mongolian steppe).
    let steppe = try #require(
      try await CLGeocoder().reverseGeocodeLocation(CLLocation(latitude: 46.0, longitude: 106.0))
        .first)
    #expect(
      steppe.locality == nil && steppe.isoCountryCode == "MN" && steppe.name == steppe.country)
    // Forward: a US state narrows.
    let springfield = try await CLGeocoder().geocodeAddressString("Springfield, IL")
    #expect(springfield.map(\.administrativeArea) == ["IL"])
    await #expect(throws: CLError.self) {
      try await CLGeocoder().geocodeAddressString("Nowhereville")
    }
  }
}
