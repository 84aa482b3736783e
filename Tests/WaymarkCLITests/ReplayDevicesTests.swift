import Foundation
import Testing
import WaymarkCore
import WaymarkTesting

/// `waymark replay --device/--device-from` through the real binary and a real SQLite file: each
/// log names its device, the store keeps the devices' histories apart, and `--jobs N` replays
/// different devices' logs at once with the store and output of replaying them one by one.
@Suite struct ReplayDevicesTests {
  /// The store's export for `devices`: every visit and stay (NDJSON), and each device's track.
  static func export(_ store: String, devices: [String]) throws -> String {
    var runs = [["visits", "--store", store, "--format", "ndjson"]]
    for device in devices {
      runs.append(["track", "export", "--store", store, "--format", "csv", "--device", device])
    }
    var text = ""
    for arguments in runs {
      let run = try CommandRun.waymark(arguments)
      #expect(run.status == 0, "\(arguments): \(run.stderr)")
      text += "== \(arguments.last ?? "")\n" + run.output
    }
    return text
  }

  /// The fleet's logs moved into directories named for devices: `layout[k]` is the directory
  /// of log `k`.
  static func arrange(_ logs: [String], into layout: [String], under directory: URL) throws
    -> [String]
  {
    var moved: [String] = []
    for (log, name) in zip(logs, layout) {
      let folder = directory.appendingPathComponent(name)
      try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
      let target = folder.appendingPathComponent(URL(fileURLWithPath: log).lastPathComponent)
      try FileManager.default.moveItem(atPath: log, toPath: target.path)
      moved.append(target.path)
    }
    return moved
  }

  @Test func distinctDevicesWithJobsOneAndTwoGiveTheStoreAndOutputOfOneByOne() throws {
    let fleet = try ReplayFleetTests.fleet(4)
    defer { try? FileManager.default.removeItem(at: fleet.directory) }
    let options = ["--places", fleet.places, "--visits", "--fixes", "--device-from", "stem"]
    let devices = (0..<4).map { "device-\($0)" }

    let oneByOne = fleet.directory.appendingPathComponent("one-by-one.db").path
    var oneByOneOutput = Data()
    var oneByOneErrors = ""
    for log in fleet.logs {
      let run = try CommandRun.waymark(["replay", log, "--store", oneByOne] + options)
      #expect(run.status == 0, "\(run.stderr)")
      oneByOneOutput += run.stdout
      oneByOneErrors += run.stderr
    }
    let expected = try Self.export(oneByOne, devices: devices)
    // The comparison means something: each device's visits carry it, and its track is its own.
    for device in devices { #expect(expected.contains(#""device":"\#(device)""#)) }
    let sections = expected.components(separatedBy: "== ")
    for device in devices {
      let track = sections.first { $0.hasPrefix("\(device)\n") } ?? ""
      #expect(track.split(whereSeparator: \.isNewline).count > 10, "\(device)'s track")
    }
    #expect(try Self.export(oneByOne, devices: ["local"]).contains("== local\ntime,"))

    for jobs in [1, 2] {
      let store = fleet.directory.appendingPathComponent("jobs-\(jobs).db").path
      let run = try CommandRun.waymark(
        ["replay"] + fleet.logs + ["--store", store, "--jobs", "\(jobs)"] + options)
      #expect(run.status == 0, "\(run.stderr)")
      #expect(run.stdout == oneByOneOutput, "--jobs \(jobs): the replay's output")
      #expect(run.stderr == oneByOneErrors, "--jobs \(jobs): the summaries")
      #expect(try Self.export(store, devices: devices) == expected, "--jobs \(jobs): the store")
    }

    // Different devices do not act on each other: another order gives the same store...
    let reversed = fleet.directory.appendingPathComponent("reversed.db").path
    let run = try CommandRun.waymark(
      ["replay"] + fleet.logs.reversed() + ["--store", reversed, "--jobs", "2"] + options)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(try Self.export(reversed, devices: devices) == expected)
    // ...while the same logs as one device's are another store in each order (control).
    var oneDevice: [String] = []
    for (name, logs) in [("forward", fleet.logs), ("backward", fleet.logs.reversed())] {
      let store = fleet.directory.appendingPathComponent("\(name).db").path
      let run = try CommandRun.waymark(
        ["replay"] + logs + [
          "--store", store, "--jobs", "2", "--places", fleet.places,
          "--visits", "--device", "van",
        ])
      #expect(run.status == 0, "\(run.stderr)")
      oneDevice.append(try Self.export(store, devices: ["van"]))
    }
    #expect(oneDevice[0] != oneDevice[1])
  }

  /// Two devices at the depot at once (device 1 arrives 90 s after device 0, before it leaves):
  /// each device's depot visit is the one it has alone, and neither closes the other's.
  @Test func devicesWithInterleavedTimesDoNotActOnEachOther() throws {
    let fleet = try ReplayFleetTests.fleet(2)
    defer { try? FileManager.default.removeItem(at: fleet.directory) }
    func depotVisits(_ store: String) throws -> [String] {
      let run = try CommandRun.waymark(
        ["visits", "--store", store, "--format", "ndjson", "--place", "depot"])
      #expect(run.status == 0, "\(run.stderr)")
      return run.output.split(separator: "\n").map(String.init)
    }
    var alone: [String] = []
    for (index, log) in fleet.logs.enumerated() {
      let store = fleet.directory.appendingPathComponent("alone-\(index).db").path
      let run = try CommandRun.waymark(
        ["replay", log, "--store", store, "--places", fleet.places, "--device-from", "stem"])
      #expect(run.status == 0, "\(run.stderr)")
      alone += try depotVisits(store)
    }
    #expect(alone.count >= 4)  // each device: at the depot at the start and at the end

    let together = fleet.directory.appendingPathComponent("together.db").path
    let run = try CommandRun.waymark(
      ["replay"] + fleet.logs + [
        "--store", together, "--places", fleet.places, "--device-from", "stem", "--jobs", "2",
      ])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(Set(try depotVisits(together)) == Set(alone))

    // Control: as one device, the second log's arrival meets the first's open visit.
    let shared = fleet.directory.appendingPathComponent("shared.db").path
    let one = try CommandRun.waymark(
      ["replay"] + fleet.logs + ["--store", shared, "--places", fleet.places, "--jobs", "2"])
    #expect(one.status == 0, "\(one.stderr)")
    let sharedVisits = try depotVisits(shared).map {
      $0.replacingOccurrences(of: #","device":"device-0""#, with: "")
        .replacingOccurrences(of: #","device":"device-1""#, with: "")
    }
    let aloneWithoutDevice = alone.map {
      $0.replacingOccurrences(of: #","device":"device-0""#, with: "")
        .replacingOccurrences(of: #","device":"device-1""#, with: "")
    }
    #expect(Set(sharedVisits) != Set(aloneWithoutDevice))
  }

  /// One device's two logs, in a parallel fleet (`--device-from dir`): they go in order on one
  /// pipeline, as one by one; swapped, the store differs.
  @Test func oneDevicesLogsKeepTheirOrderInAParallelFleet() throws {
    let fleet = try ReplayFleetTests.fleet(4)
    defer { try? FileManager.default.removeItem(at: fleet.directory) }
    let logs = try Self.arrange(
      fleet.logs, into: ["van", "van", "truck", "bike"], under: fleet.directory)
    let options = ["--places", fleet.places, "--visits", "--device-from", "dir"]
    let devices = ["van", "truck", "bike"]

    let oneByOne = fleet.directory.appendingPathComponent("one-by-one.db").path
    for log in logs {
      let run = try CommandRun.waymark(["replay", log, "--store", oneByOne] + options)
      #expect(run.status == 0, "\(run.stderr)")
    }
    let expected = try Self.export(oneByOne, devices: devices)
    let store = fleet.directory.appendingPathComponent("fleet.db").path
    let run = try CommandRun.waymark(
      ["replay"] + logs + ["--store", store, "--jobs", "2"] + options)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(try Self.export(store, devices: devices) == expected)

    let swapped = fleet.directory.appendingPathComponent("swapped.db").path
    let other = try CommandRun.waymark(
      ["replay", logs[1], logs[0], logs[2], logs[3], "--store", swapped, "--jobs", "2"]
        + options)
    #expect(other.status == 0, "\(other.stderr)")
    #expect(try Self.export(swapped, devices: devices) != expected)
  }

  @Test func badDeviceNamesAreRefusedNamingTheLogAndTheReason() throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-devices-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: directory) }
    let spaced = directory.appendingPathComponent("my van/.hidden.nmea").path
    let cases: [(arguments: [String], message: String)] = [
      (
        ["replay", "a.nmea", "--device", "my van"],
        "'--device' got 'my van': a device name has only"
      ),
      (["replay", "a.nmea", "--device", ""], "'--device' got '': a device name cannot be empty"),
      (["replay", "a.nmea", "--device", "a", "--device-from", "stem"], "cannot both be given"),
      (["replay", "a.nmea", "--device-from", "name"], "expects 'stem' or 'dir', got 'name'"),
      (
        ["replay", spaced, "--device-from", "stem"],
        "'\(spaced)': '--device-from stem' gives the device name '': a device name cannot be empty"
      ),
      (
        ["replay", spaced, "--device-from", "dir"],
        "'--device-from dir' gives the device name 'my van': a device name has only"
      ),
      (["replay", "a.nmea", "--device-from", "dir"], "gives the device name ''"),
      (["replay", "-", "--device-from", "stem"], "cannot name the device of '-'"),
      (["track", "export", "--device", "-van"], "'--device' got '-van': a device name starts"),
    ]
    for (arguments, message) in cases {
      let run = try CommandRun.waymark(arguments)
      #expect(run.status == 64, "\(arguments)")
      #expect(run.stderr.contains(message), "\(arguments): \(run.stderr)")
    }
    // Positive control: a good name gets past the names to the missing log.
    let run = try CommandRun.waymark(["replay", "a.nmea", "--device", "van-3"])
    #expect(run.status == 66, "\(run.stderr)")
  }
}
