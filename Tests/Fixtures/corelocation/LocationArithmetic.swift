// CLLocation as Apple's CLLocation page describes it: its initializers, −1 for invalid values,
// distance(from:), and the coordinate helpers. Compiled with only the import line changed.
import CoreLocation

let berlin = CLLocation(latitude: 52.52, longitude: 13.405)
let paris = CLLocation(latitude: 48.8566, longitude: 2.3522)
let kilometres = berlin.distance(from: paris) / 1000
print("distance \(Int(kilometres.rounded()))")
print("horizontal \(berlin.horizontalAccuracy) vertical \(berlin.verticalAccuracy)")
print("speed \(berlin.speed) course \(berlin.course)")
print("altitudeValid \(berlin.verticalAccuracy > 0)")
print("floor \(berlin.floor == nil)")

let measured = CLLocation(
  coordinate: CLLocationCoordinate2DMake(52.52, 13.405), altitude: 34,
  horizontalAccuracy: 5, verticalAccuracy: 8, course: 90, speed: 12,
  timestamp: Date(timeIntervalSince1970: 1_800_000_000))
print("measured \(measured.speed) \(measured.course) \(measured.speedAccuracy)")
print("valid \(CLLocationCoordinate2DIsValid(measured.coordinate))")
print("invalid \(CLLocationCoordinate2DIsValid(kCLLocationCoordinate2DInvalid))")
let elapsed: TimeInterval = measured.timestamp.timeIntervalSince1970
print("timestamp \(Int(elapsed))")
let distance = Measurement(value: measured.distance(from: berlin), unit: UnitLength.meters)
print("measurement \(distance.converted(to: .kilometers).value < 1)")
do {
  throw CLError(.denied)
} catch CLError.denied {
  print("caught denied")
} catch {
  print("caught other")
}
