// libFuzzer entry point for what a broker sends waymarkd (`setWaypoints` on `<topic>/cmd`) and
// what waymarkd builds from numbers that came from outside (OwnTracks messages from any fix).
// Built by Fuzz/run-parsers.sh waypoints; not part of the package.
import FoundationEssentials
import WaymarkCore
import WaymarkMQTT

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWaypoints(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let result = Result { () throws(OwnTracks.CommandError) in try OwnTracks.setWaypoints(bytes) }
  let again = Result { () throws(OwnTracks.CommandError) in try OwnTracks.setWaypoints(bytes) }
  switch (result, again) {
  case (.success(let places), .success(let second)):
    precondition(places == second, "two readings of the same command differ")
    precondition(places.count <= OwnTracks.maximumWaypoints, "\(places.count) waypoints accepted")
    var ids = Set<String>()
    for place in places {
      precondition(Place.radiusProblem(place.radiusMeters) == nil, "radius \(place.radiusMeters)")
      precondition(Place.textProblem(place.name) == nil, "name \(place.name.debugDescription)")
      precondition(Place.textProblem(place.id) == nil, "id \(place.id.debugDescription)")
      precondition(place.coordinate.isValid, "coordinate \(place.coordinate)")
      precondition(ids.insert(place.id).inserted, "id \(place.id) twice")
    }
    // The retained waypoints message is built from them without a trap.
    _ = OwnTracks.waypoints(places)
  case (.failure(let error), .failure(let second)):
    precondition(error.description == second.description, "two refusals differ")
    precondition(!error.description.isEmpty, "a refusal without a reason")
  default:
    preconditionFailure("the same command accepted once and refused once")
  }
  // The same bytes as a fix's numbers, as libgps or an NMEA line could hand them over: the
  // limits drop what no receiver reports, and a message is built from the fix with and
  // without them, never trapping (the conversions saturate).
  var fix = Fix(mode: .threeDimensional)
  var cursor = 0
  func number() -> Double {
    guard cursor + 8 <= bytes.count else { return 0 }
    defer { cursor += 8 }
    var bits: UInt64 = 0
    for index in 0..<8 { bits |= UInt64(bytes[cursor + index]) << (8 * UInt64(index)) }
    return Double(bitPattern: bits)
  }
  fix.time = Date(timeIntervalSince1970: number().clamped(to: -1e15...1e15))
  fix.coordinate = Coordinate(latitude: number(), longitude: number())
  fix.altitudeMSL = number()
  fix.speed = number()
  fix.track = number()
  fix.horizontalError = number()
  _ = OwnTracks.location(fix, tid: "fz")
  let limited = fix.withinLimits()
  if let time = limited.time {
    precondition(Fix.Limits.isPlausibleTime(seconds1970: time.timeIntervalSince1970))
  }
  if let speed = limited.speed { precondition(Fix.Limits.speedMetersPerSecond.contains(speed)) }
  if let altitude = limited.altitudeMSL {
    precondition(Fix.Limits.altitudeMeters.contains(altitude))
  }
  _ = OwnTracks.location(limited, tid: "fz")
  return 0
}

extension Double {
  fileprivate func clamped(to range: ClosedRange<Double>) -> Double {
    isNaN ? 0 : Swift.min(Swift.max(self, range.lowerBound), range.upperBound)
  }
}
