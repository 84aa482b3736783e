import Testing
import WaymarkCore

@Suite struct CoordinateTests {
  @Test func oneDegreeOfLatitudeIsAbout111Kilometres() {
    let a = Coordinate(latitude: 0, longitude: 0)
    let b = Coordinate(latitude: 1, longitude: 0)
    #expect(abs(a.distance(to: b) - 111_195) < 5)
  }

  @Test func offsetThenDistanceRoundTrips() {
    let origin = Coordinate(latitude: -33.8688, longitude: 151.2093)
    for bearing in stride(from: 0.0, to: 360, by: 45) {
      let moved = origin.offset(by: 250, bearingDegrees: bearing)
      #expect(abs(origin.distance(to: moved) - 250) < 1e-6)
      let back = origin.bearing(to: moved)
      let difference = abs(((back - bearing) + 540).truncatingRemainder(dividingBy: 360) - 180)
      #expect(difference < 1e-6)
    }
  }

  @Test func offsetWrapsTheAntimeridian() {
    let moved = Coordinate(latitude: 0, longitude: 179.9999).offset(by: 100, bearingDegrees: 90)
    #expect(moved.longitude < -179.99)
    #expect(moved.isValid)
  }

  @Test func validity() {
    #expect(!Coordinate(latitude: 91, longitude: 0).isValid)
    #expect(!Coordinate(latitude: .nan, longitude: 0).isValid)
    #expect(Coordinate(latitude: -90, longitude: 180).isValid)
  }
}
