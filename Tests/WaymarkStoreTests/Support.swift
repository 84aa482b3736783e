import Foundation
import WaymarkCore
import WaymarkStore
import WaymarkTesting

/// A fresh directory under the system temporary directory, removed by `remove()`.
struct TemporaryDirectory {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-store-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  func path(_ name: String) -> String { url.appendingPathComponent(name).path }

  func write(_ name: String, _ text: String) throws -> String {
    let path = path(name)
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  func remove() { try? FileManager.default.removeItem(at: url) }
}

/// The result of running the built `waymark` executable.
struct ToolResult {
  var status: Int32
  var stdout: String
  var stderr: String
}

/// Runs `waymark` with `arguments` in `directory`, with a clean environment whose HOME is
/// `directory` (so no default store outside the test directory is ever touched).
func waymark(
  _ arguments: [String], in directory: TemporaryDirectory, environment: [String: String] = [:]
) throws -> ToolResult {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: Products.executable("waymark"))
  process.arguments = arguments
  process.currentDirectoryURL = directory.url
  var env = ["HOME": directory.url.path, "PATH": "/usr/bin:/bin"]
  // In a coverage run, waymark's profile joins the run's.
  env["LLVM_PROFILE_FILE"] = ProcessInfo.processInfo.environment["LLVM_PROFILE_FILE"]
  env.merge(environment) { $1 }
  process.environment = env
  let outPath = directory.path("stdout-\(UUID().uuidString)")
  let errPath = directory.path("stderr-\(UUID().uuidString)")
  _ = FileManager.default.createFile(atPath: outPath, contents: nil)
  _ = FileManager.default.createFile(atPath: errPath, contents: nil)
  let out = try FileHandle(forWritingTo: URL(fileURLWithPath: outPath))
  let err = try FileHandle(forWritingTo: URL(fileURLWithPath: errPath))
  process.standardOutput = out
  process.standardError = err
  process.standardInput = FileHandle.nullDevice
  try process.run()
  process.waitUntilExit()
  try out.close()
  try err.close()
  let stdout = String(
    decoding: FileManager.default.contents(atPath: outPath) ?? Data(), as: UTF8.self)
  let stderr = String(
    decoding: FileManager.default.contents(atPath: errPath) ?? Data(), as: UTF8.self)
  try? FileManager.default.removeItem(atPath: outPath)
  try? FileManager.default.removeItem(atPath: errPath)
  return ToolResult(status: process.terminationStatus, stdout: stdout, stderr: stderr)
}

/// A reason for hand-made events.
func reason(_ rule: String) -> EventReason {
  EventReason(
    rule: rule, distanceMeters: 12.5, horizontalAccuracyMeters: 4, enterRadiusMeters: 100,
    exitRadiusMeters: 150, confirmations: 3, dwellSeconds: 20)
}

/// A fixed instant: 2026-11-29T12:00:00Z plus `seconds`.
func time(_ seconds: Double) -> Date {
  Date(timeIntervalSince1970: 1_795_953_600 + seconds)
}

func arrival(_ place: Place, at seconds: Double) -> PlaceEvent {
  .arrival(
    PlaceEvent.Arrival(
      time: time(seconds), placeID: place.id, placeName: place.name,
      coordinate: place.coordinate, reason: reason("inside")))
}

func departure(_ place: Place, at seconds: Double, arrived: Double) -> PlaceEvent {
  .departure(
    PlaceEvent.Departure(
      time: time(seconds), placeID: place.id, placeName: place.name,
      coordinate: place.coordinate.offset(by: 300, bearingDegrees: 90), arrival: time(arrived),
      reason: reason("outside")))
}

func fix(at seconds: Double, _ coordinate: Coordinate, accuracy: Double? = 5) -> Fix {
  Fix(
    time: time(seconds), mode: .threeDimensional, coordinate: coordinate,
    horizontalError: accuracy)
}

let cafe = Place(
  id: "cafe", name: "Blue Bottle", coordinate: Coordinate(latitude: 52.52, longitude: 13.405),
  radiusMeters: 60, category: "cafe")
let office = Place(
  id: "office", name: "Office", coordinate: Coordinate(latitude: 52.53, longitude: 13.41))

/// Writes `places` into a store of an older schema (before version 6's place groups) as the
/// Waymark of that version did: for the tests that build an old store and migrate it.
func insertPlacesBeforeGroups(_ connection: Connection, _ places: [Place]) throws {
  for place in places {
    _ = try connection.execute(
      """
      INSERT INTO place (id, name, latitude, longitude, radius, category, subtitle, address, town,
        url, image, detail, created, visited, visit_count, exit_radius, maximum_accuracy,
        confirmations, dwell_seconds)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      """,
      [
        .text(place.id), .text(place.name), .real(place.coordinate.latitude),
        .real(place.coordinate.longitude), .real(place.radiusMeters), .text(place.category),
        .text(place.subtitle), .text(place.address), .text(place.town), .text(place.url),
        .text(place.image), .text(place.detail),
        place.created.map { .integer(Timestamp.milliseconds($0)) } ?? .null,
        .integer(place.visited ? 1 : 0), .integer(Int64(place.visitCount)),
        .real(place.detection.exitRadiusMeters), .real(place.detection.maximumAccuracyMeters),
        .integer(place.detection.confirmations), .real(place.detection.dwellSeconds),
      ])
  }
}
