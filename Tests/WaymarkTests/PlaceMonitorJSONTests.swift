import Foundation
import Testing
import Waymark
import WaymarkCore

@Suite struct PlaceMonitorJSONTests {
  let reason = EventReason(
    rule: "pass-through", distanceMeters: 12.345, horizontalAccuracyMeters: nil,
    enterRadiusMeters: 50, exitRadiusMeters: 80, confirmations: 0, dwellSeconds: 6.6666)

  @Test func arrivalLine() {
    let event = PlaceEvent.arrival(
      .init(
        time: Timestamp.parse("2026-11-29T12:00:07.000Z")!, placeID: "42",
        placeName: "Café \"Zum Löwen\"\n", coordinate: Coordinate(latitude: 48.1, longitude: -0.5),
        reason: reason))
    #expect(
      event.jsonLine().string
        == #"{"class":"ARRIVAL","time":"2026-11-29T12:00:07.000Z","place":"42","#
        + #""name":"Café \"Zum Löwen\"\n","lat":48.100000000,"lon":-0.500000000,"#
        + #""reason":{"rule":"pass-through","distance":12.3,"enter":50.0,"exit":80.0,"#
        + #""confirmations":0,"dwell":6.667}}"#)
  }

  @Test func departureLine() {
    var full = reason
    full.rule = "outside"
    full.horizontalAccuracyMeters = 4.25
    let event = PlaceEvent.departure(
      .init(
        time: Timestamp.parse("2026-11-30T00:10:00.250Z")!, placeID: "home", placeName: "Home",
        coordinate: Coordinate(latitude: -33.8688, longitude: 151.2093),
        arrival: Timestamp.parse("2026-11-29T23:55:00.000Z")!, reason: full))
    var bytes: [UInt8] = []
    event.jsonLine().write(to: &bytes)
    #expect(
      String(decoding: bytes, as: UTF8.self)
        == #"{"class":"DEPARTURE","time":"2026-11-30T00:10:00.250Z","place":"home","#
        + #""arrival":"2026-11-29T23:55:00.000Z","duration":900.250,"name":"Home","#
        + #""lat":-33.868800000,"lon":151.209300000,"reason":{"rule":"outside","distance":12.3,"#
        + #""accuracy":4.3,"enter":50.0,"exit":80.0,"confirmations":0,"dwell":6.667}}"# + "\n")
  }
}
