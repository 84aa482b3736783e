import Foundation
import Testing
import WaymarkCore
import WaymarkTesting

/// `waymark auth --state-dir` (the applications' grants.json) through the built binary, on a
/// private state directory. The daemon's store (`--store`) is tested with the daemon.
@Suite struct AuthorizationCommandTests {
  struct Result {
    var status: Int32
    var output: String
    var error: String
  }

  /// The build has no `waymark` next to the tests.
  struct MissingExecutable: Error, CustomStringConvertible {
    var path: String
    var description: String {
      "no executable \(path): `swift build --build-tests` (Scripts/test.sh) builds it with the tests"
    }
  }

  /// Runs the built `waymark`; a build without it fails the test (the test command builds it,
  /// so its absence is a broken build, not a reason to pass or skip).
  func waymark(_ arguments: [String], state: URL) throws -> Result {
    let executable = Products.executable("waymark")
    guard FileManager.default.isExecutableFile(atPath: executable) else {
      throw MissingExecutable(path: executable)
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments =
      arguments.first == "auth" && arguments.count > 1 && arguments != ["auth", "--help"]
      ? arguments + ["--state-dir", state.path] : arguments
    var environment = ProcessInfo.processInfo.environment
    environment["STATE_DIRECTORY"] = state.path
    process.environment = environment
    let output = Pipe()
    let error = Pipe()
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = output
    process.standardError = error
    try process.run()
    let out = output.fileHandleForReading.readDataToEndOfFile()
    let err = error.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return Result(
      status: process.terminationStatus, output: String(decoding: out, as: UTF8.self),
      error: String(decoding: err, as: UTF8.self))
  }

  @Test func grantStatusRevokeReset() throws {
    let state = temporaryDirectory()
    let granted = try waymark(["auth", "grant", "org.a", "whenInUse", "--reduced"], state: state)
    #expect(granted.status == 0)
    #expect(
      granted.output.hasPrefix(
        #"{"class":"GRANT","client":"org.a","level":"whenInUse","accuracy":"reduced","grantedAt":""#
      ))
    let record = try #require(try FileGrantStore(directory: state).grant(for: "org.a"))
    #expect(record.accuracy == .reduced)

    #expect(try waymark(["auth", "grant", "org.b", "always"], state: state).status == 0)
    let status = try waymark(["auth", "status"], state: state)
    let lines = status.output.split(separator: "\n")
    #expect(lines.count == 3)
    #expect(lines.first?.hasPrefix(#"{"class":"SERVICES","enabled":"#) == true)
    #expect(lines[1].contains(#""client":"org.a""#))
    #expect(lines[2].contains(#""client":"org.b","level":"always","accuracy":"full""#))

    let one = try waymark(["auth", "status", "org.b"], state: state)
    #expect(
      one.output
        == #"{"class":"AUTHORIZATION","client":"org.b","status":"authorizedAlways","accuracy":"full"}"#
        + "\n")

    let revoked = try waymark(["auth", "revoke", "org.a"], state: state)
    #expect(revoked.output == #"{"class":"REVOKE","client":"org.a","removed":true}"# + "\n")
    let reset = try waymark(["auth", "reset"], state: state)
    #expect(reset.output == #"{"class":"RESET","removed":1}"# + "\n")
    #expect(try FileGrantStore(directory: state).allGrants().isEmpty)
  }

  @Test func nonInteractiveRequestIsDenied() throws {
    let state = temporaryDirectory()
    let result = try waymark(["auth", "request", "org.c"], state: state)
    #expect(result.status == 0)
    #expect(result.output.contains(#""status":"denied""#))
    #expect(try FileGrantStore(directory: state).grant(for: "org.c")?.level == .never)
  }

  @Test func usageAndDataErrors() throws {
    let state = temporaryDirectory()
    let bad = try waymark(["auth", "grant", "org.a", "sometimes"], state: state)
    #expect(bad.status == 64)
    #expect(bad.error.hasPrefix("Error: Unknown level 'sometimes'"))
    #expect(bad.error.contains("USAGE: waymark auth"))
    #expect(try waymark(["auth"], state: state).status == 64)
    #expect(try waymark(["auth", "frobnicate"], state: state).status == 64)
    #expect(try waymark(["auth", "revoke", "org.a", "--reduced"], state: state).status == 64)

    let help = try waymark(["auth", "--help"], state: state)
    #expect(help.status == 0)
    #expect(help.output.hasPrefix("USAGE: waymark auth"))

    try Data("{broken".utf8).write(to: state.appendingPathComponent("grants.json"))
    let corrupt = try waymark(["auth", "status"], state: state)
    #expect(corrupt.status == 65)
    #expect(corrupt.output.isEmpty)
    #expect(corrupt.error.contains("grants.json is not a valid grants file"))
  }
}
