import Foundation
import Testing
import WaymarkCore
import WaymarkMQTT
import WaymarkStore

@Suite struct OwnTracksTests {
  private let time = Date(timeIntervalSince1970: 1_800_000_000.4)

  private func object(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  }

  @Test func locationHasOwnTracksFieldsAndUnits() throws {
    let fix = Fix(
      time: time, mode: .threeDimensional,
      coordinate: Coordinate(latitude: 52.52, longitude: 13.405),
      altitudeMSL: 34.6, speed: 10, track: 89.6, horizontalError: 4.4)
    let json = try object(try #require(OwnTracks.location(fix, tid: "wm")))
    #expect(json["_type"] as? String == "location")
    #expect(json["tst"] as? Int == 1_800_000_000)
    #expect(json["lat"] as? Double == 52.52 && json["lon"] as? Double == 13.405)
    #expect(json["acc"] as? Int == 4 && json["alt"] as? Int == 35)
    #expect(json["vel"] as? Int == 36)  // km/h
    #expect(json["cog"] as? Int == 90)
    #expect(json["tid"] as? String == "wm" && json["t"] as? String == "p")
    #expect(OwnTracks.location(Fix(time: time, mode: .noFix), tid: "wm") == nil)
  }

  /// Values beyond every integer (a fix built in-process, which no boundary checked; a place an
  /// old store holds): the message saturates them instead of trapping; NaN becomes 0.
  @Test func extremeValuesSaturateInsteadOfTrapping() throws {
    let fix = Fix(
      time: time, mode: .threeDimensional,
      coordinate: Coordinate(latitude: 52.52, longitude: 13.405),
      altitudeMSL: -1e300, speed: 1e300, track: .nan, horizontalError: .infinity)
    let json = try object(try #require(OwnTracks.location(fix, tid: "wm")))
    #expect(json["acc"] as? Int == Int.max && json["vel"] as? Int == Int.max)
    #expect(json["alt"] as? Int == Int.min && json["cog"] as? Int == 0)
    let wide = Place(
      id: "w", name: "W", coordinate: Coordinate(latitude: 1, longitude: 2), radiusMeters: 1e19)
    let waypoints = try object(OwnTracks.waypoints([wide]))
    let list = try #require(waypoints["waypoints"] as? [[String: Any]])
    #expect(list.first?["rad"] as? Int == Int.max)
    #expect(Int(saturating: 12.7) == 12 && Int(saturating: -12.7) == -12)
    #expect(Int64(saturating: -.infinity) == .min && Int(saturating: .nan) == 0)
  }

  /// A broker may not make the daemon parse a huge command or store without bound: more than
  /// 1,000 waypoints, or a payload over 1 MiB, is refused whole before any place is read.
  @Test func setWaypointsIsBounded() throws {
    func command(_ count: Int, desc: String = "P") -> [UInt8] {
      let items = (0..<count).map {
        #"{"desc":"\#(desc)\#($0)","lat":1,"lon":2,"rad":50,"rid":"p\#($0)"}"#
      }
      return Array(
        (#"{"_type":"cmd","action":"setWaypoints","waypoints":["# + items.joined(separator: ",")
          + "]}").utf8)
    }
    #expect(try OwnTracks.setWaypoints(command(1_000)).count == 1_000)
    #expect(throws: OwnTracks.CommandError.self) { try OwnTracks.setWaypoints(command(1_001)) }
    let long = String(repeating: "x", count: 190)
    #expect(throws: OwnTracks.CommandError.self) {
      try OwnTracks.setWaypoints(command(1, desc: String(repeating: long, count: 2)))
    }
    let oversized = command(1) + Array(repeating: UInt8(ascii: " "), count: 1 << 20)
    #expect(throws: OwnTracks.CommandError.self) { try OwnTracks.setWaypoints(oversized) }
  }

  @Test func transitionCarriesAStableID() throws {
    let reason = EventReason(
      rule: "inside", distanceMeters: 3, horizontalAccuracyMeters: 5, enterRadiusMeters: 50,
      exitRadiusMeters: 80, confirmations: 3, dwellSeconds: 2)
    let event = PlaceEvent.arrival(
      PlaceEvent.Arrival(
        time: time, placeID: "home", placeName: "Home",
        coordinate: Coordinate(latitude: 1, longitude: 2), reason: reason))
    let json = try object(
      OwnTracks.transition(
        event, placeCreated: Date(timeIntervalSince1970: 1_700_000_000), tid: "wm"))
    #expect(json["event"] as? String == "enter" && json["desc"] as? String == "Home")
    #expect(json["wtst"] as? Int == 1_700_000_000 && json["t"] as? String == "c")
    #expect(json["acc"] as? Int == 5)
    #expect(json["_id"] as? String == "ARRIVAL-home-1800000000400")
  }

  @Test func setWaypointsIsCheckedLikeAPlacesFile() throws {
    let good = #"""
      {"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[
        {"_type":"waypoint","desc":"Home","lat":52.5,"lon":13.4,"rad":60,"tst":1700000000},
        {"_type":"waypoint","desc":"Work","lat":-33.9,"lon":151.2,"rad":100,"rid":"work"}]}}
      """#
    let places = try OwnTracks.setWaypoints(Array(good.utf8))
    #expect(places.map(\.id) == ["ot-1700000000", "work"])
    #expect(places.map(\.radiusMeters) == [60, 100])
    for (payload, reason) in [
      ("nonsense", "not JSON"),
      (#"{"_type":"location"}"#, "not a command"),
      (#"{"_type":"cmd","action":"reportLocation"}"#, "unsupported action"),
      (#"{"_type":"cmd","action":"setWaypoints"}"#, "without a waypoints list"),
      (
        #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"A","lat":91,"lon":0,"rad":5}]}"#,
        "waypoint 0: lat"
      ),
      (
        #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"A","lat":1,"lon":0,"rad":0}]}"#,
        "waypoint 0: rad"
      ),
      (
        #"{"_type":"cmd","action":"setWaypoints","waypoints":[{"desc":"A","lat":1,"lon":0,"rad":5,"rid":"x"},{"desc":"B","lat":1,"lon":0,"rad":5,"rid":"x"}]}"#,
        "waypoint 1: id 'x' given twice"
      ),
    ] {
      #expect(throws: OwnTracks.CommandError.self) {
        try OwnTracks.setWaypoints(Array(payload.utf8))
      }
      do {
        _ = try OwnTracks.setWaypoints(Array(payload.utf8))
      } catch {
        #expect(error.description.contains(reason), "\(error)")
      }
    }
  }

  @Test func waypointsListEveryPlace() throws {
    let places = [
      Place(
        id: "a", name: "A", coordinate: Coordinate(latitude: 1, longitude: 2), radiusMeters: 49.6)
    ]
    let json = try object(OwnTracks.waypoints(places))
    let list = try #require(json["waypoints"] as? [[String: Any]])
    #expect(list.count == 1)
    #expect(list[0]["rad"] as? Int == 50 && list[0]["rid"] as? String == "a")
  }
}
