import Foundation
import Glibc
import Testing
import Waymark
import WaymarkCore
import WaymarkSimulation
import WaymarkTesting

/// A pseudo-terminal pair: the test plays the person on `primary`, the code under test uses
/// `secondary` as its terminal.
final class PseudoTerminal: Sendable {
  let primary: Int32
  let secondary: Int32
  let secondaryPath: String

  /// Opens `/dev/ptmx`, unlocks it and opens its secondary (what `posix_openpt(3)`,
  /// `grantpt(3)`, `unlockpt(3)` and `ptsname(3)` do; those are not visible from Swift's Glibc).
  init() throws {
    let primary = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard primary >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
    var unlock: Int32 = 0
    var number: UInt32 = 0
    let setLock: UInt = 0x4004_5431  // TIOCSPTLCK
    let getNumber: UInt = 0x8004_5430  // TIOCGPTN
    guard ioctl(primary, setLock, &unlock) == 0, ioctl(primary, getNumber, &number) == 0 else {
      let code = errno
      close(primary)
      throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    }
    let path = "/dev/pts/\(number)"
    let secondary = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
    guard secondary >= 0 else {
      let code = errno
      close(primary)
      throw POSIXError(POSIXErrorCode(rawValue: code) ?? .EIO)
    }
    self.primary = primary
    self.secondary = secondary
    self.secondaryPath = path
  }

  deinit {
    close(secondary)
    close(primary)
  }

  /// Types `text` as the person would.
  func type(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(primary, $0.baseAddress, $0.count) }
  }

  /// Reads what the terminal shows until `marker` appears (or 20 s pass with nothing new, so
  /// that a broken test fails instead of hanging). Runs on a thread of its own.
  func read(until marker: String) async -> String {
    let primary = primary
    return await withCheckedContinuation { continuation in
      let thread = Thread {
        var text = ""
        var buffer = [UInt8](repeating: 0, count: 512)
        while !text.contains(marker) {
          var descriptor = pollfd(fd: primary, events: Int16(POLLIN), revents: 0)
          guard poll(&descriptor, 1, 20_000) > 0 else { break }
          let count = Glibc.read(primary, &buffer, buffer.count)
          if count <= 0 { break }
          text += String(decoding: buffer[0..<count], as: UTF8.self)
        }
        continuation.resume(returning: text)
      }
      thread.start()
    }
  }
}

@Suite struct AuthorizationTerminalTests {
  @Test func interactiveGrantThroughAPseudoTerminal() async throws {
    let terminal = try PseudoTerminal()
    let agent = TerminalAuthorizationAgent(input: terminal.secondary, output: terminal.secondary)
    #expect(agent.isInteractive)
    let directory = temporaryDirectory()
    let center = AuthorizationCenter(
      store: FileGrantStore(directory: directory), agent: agent, services: .enabled)
    let manager = LocationManager(
      clientID: "org.example.map", source: ScriptedSource().source, authorization: center,
      clock: ManualClock(), purpose: "Shows where you are on the map.")
    let request = Task { await manager.requestWhenInUseAuthorization() }

    let prompt = await terminal.read(until: "Choice: ")
    #expect(prompt.contains("Allow \"org.example.map\" to use your location while in use?"))
    #expect(prompt.contains("Shows where you are on the map."))
    #expect(prompt.contains("[o] Allow once"))
    #expect(!prompt.contains("[a] Allow always"))  // not offered for a when-in-use request
    terminal.type("maybe\n")
    let again = await terminal.read(until: "Choice: ")
    #expect(again.contains("Please answer with one of the letters in brackets."))
    terminal.type("wr\n")

    #expect(await request.value == .authorizedWhenInUse)
    #expect(manager.accuracyAuthorization == .reduced)
    let saved = try FileGrantStore(directory: directory).grant(for: "org.example.map")
    #expect(saved?.level == .whenInUse)
    #expect(saved?.accuracy == .reduced)
  }

  @Test func endOfInputAtThePromptDenies() async throws {
    let terminal = try PseudoTerminal()
    let agent = TerminalAuthorizationAgent(input: terminal.secondary, output: terminal.secondary)
    let request = Task {
      await agent.decide(AuthorizationRequest(clientID: "c", level: .always))
    }
    let prompt = await terminal.read(until: "Choice: ")
    #expect(prompt.contains("[a] Allow always"))
    terminal.type("\u{04}")  // Ctrl-D on an empty line: end of input
    #expect(await request.value == .deny)
  }

  @Test func pipesAreNotInteractive() throws {
    var descriptors: [Int32] = [0, 0]
    #expect(pipe(&descriptors) == 0)
    defer {
      close(descriptors[0])
      close(descriptors[1])
    }
    let agent = TerminalAuthorizationAgent(input: descriptors[0], output: descriptors[1])
    #expect(!agent.isInteractive)
  }

  @Test(arguments: [
    ("o", AuthorizationAnswer.allowOnce(.full)),
    ("or", .allowOnce(.reduced)),
    ("W", .allow(.whenInUse, .full)),
    (" a \n", .allow(.always, .full)),
    ("ar", .allow(.always, .reduced)),
    ("d", .deny),
    ("n", .deny),
  ])
  func answersParse(typed: String, expected: AuthorizationAnswer) {
    let request = AuthorizationRequest(clientID: "c", level: .always)
    #expect(TerminalAuthorizationAgent.parse(typed, for: request) == expected)
  }

  @Test func alwaysIsNotAcceptedForAWhenInUseRequest() {
    let request = AuthorizationRequest(clientID: "c", level: .whenInUse)
    #expect(TerminalAuthorizationAgent.parse("a", for: request) == nil)
    #expect(TerminalAuthorizationAgent.parse("x", for: request) == nil)
  }

  @Test func waymarkAuthRequestPromptsOnItsTerminal() async throws {
    let executable = Products.executable("waymark")
    guard FileManager.default.isExecutableFile(atPath: executable) else {
      Issue.record("skipped: \(executable) is not built (run `swift build` first)")
      return
    }
    let terminal = try PseudoTerminal()
    let directory = temporaryDirectory()
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = [
      "auth", "request", "org.example.cli", "--always", "--state-dir", directory.path,
    ]
    var environment = ProcessInfo.processInfo.environment
    environment["STATE_DIRECTORY"] = directory.path
    process.environment = environment
    let handle = FileHandle(fileDescriptor: terminal.secondary, closeOnDealloc: false)
    process.standardInput = handle
    process.standardOutput = handle
    process.standardError = handle
    try process.run()
    let prompt = await terminal.read(until: "Choice: ")
    #expect(prompt.contains("Allow \"org.example.cli\" to use your location at any time"))
    terminal.type("a\n")
    let result = await terminal.read(until: "}")
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    #expect(
      result.contains(
        #"{"class":"AUTHORIZATION","client":"org.example.cli","status":"authorizedAlways","accuracy":"full"}"#
      ))
    let saved = try FileGrantStore(directory: directory).grant(for: "org.example.cli")
    #expect(saved?.level == .always)
  }
}
