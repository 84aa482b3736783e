import Foundation
import Glibc
import Testing
import WaymarkCore

/// The small replacements that keep waymarkd's modules on FoundationEssentials: each is checked
/// against the Foundation API it replaces.
@Suite struct FoundationFreeHelperTests {
  @Test(arguments: [
    ("/var/lib/waymark", "waymark.db", "/var/lib/waymark/waymark.db"),
    ("/var/lib/waymark/", "waymark.db", "/var/lib/waymark/waymark.db"),
    ("state", "waymark/waymark.db", "state/waymark/waymark.db"),
    ("", "waymark.db", "waymark.db"),
    ("/", "etc", "/etc"),
  ])
  func joinMatchesNSString(directory: String, component: String, expected: String) {
    #expect(PathText.join(directory, component) == expected)
    #expect((directory as NSString).appendingPathComponent(component) == expected)
  }

  @Test(arguments: [
    ("/var/lib/waymark/waymark.db", "/var/lib/waymark"),
    ("/var/lib/waymark/", "/var/lib"),
    ("/waymark.db", "/"),
    ("waymark.db", ""),
    ("/", "/"),
    ("a/b", "a"),
  ])
  func parentMatchesNSString(path: String, expected: String) {
    #expect(PathText.parent(of: path) == expected)
    #expect((path as NSString).deletingLastPathComponent == expected)
  }

  @Test func trimmingMatchesCharacterSet() {
    for text in ["", "   ", "  key = value \t", "\n\tx\r\n", "a b", "\u{00A0}wide\u{2003}", "é "] {
      #expect(
        String(text.trimmedWhitespace) == text.trimmingCharacters(in: .whitespacesAndNewlines),
        "\(text.debugDescription)")
    }
  }

  @Test func fixedMatchesPrintfAwayFromExactTies() {
    var generator = SeededGenerator(seed: 7)
    for _ in 0..<20_000 {
      let magnitude = [1.0, 100.0, 1e5][Int(generator.next() % 3)]
      let value = (generator.nextUnit() * 2 - 1) * magnitude
      for decimals in [0, 1, 3, 7, 9] {
        // Documented differences: a negative value that rounds to zero has no sign, and within
        // a thousandth of a unit of a tie the scaled product may round the other way.
        let scaled = abs(value) * pow(10, Double(decimals))
        if abs(scaled - scaled.rounded(.down) - 0.5) < 1e-3 { continue }
        var reference = String(format: "%.\(decimals)f", value)
        if reference.hasPrefix("-"), Double(reference) == 0 { reference.removeFirst() }
        #expect(value.fixed(decimals) == reference, "\(value) with \(decimals) decimals")
      }
    }
    #expect(12.0.fixed(1) == "12.0")
    #expect((-0.04).fixed(1) == "0.0")
    #expect(Double.nan.fixed(3) == "nan")
  }

  @Test func homeComesFromTheEnvironmentThenThePasswordDatabase() throws {
    #expect(HomeDirectory.resolve(environment: ["HOME": "/home/someone"]) == "/home/someone")
    let entry = try #require(getpwuid(getuid()))
    let expected = String(cString: try #require(entry.pointee.pw_dir))
    #expect(HomeDirectory.resolve(environment: [:]) == expected)
    #expect(HomeDirectory.resolve(environment: ["HOME": ""]) == expected)
  }

  @Test func detachedThreadRunsConcurrentlyUnderItsName() async {
    let caller = pthread_self()
    let (name, sameThread) = await withCheckedContinuation { continuation in
      DetachedThread.start(name: "waymark-test-thread") {
        let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
        continuation.resume(
          returning: (
            comm.trimmingCharacters(in: .newlines), pthread_equal(pthread_self(), caller) != 0
          ))
      }
    }
    #expect(name == "waymark-test-th")  // Linux keeps 15 bytes
    #expect(!sameThread)
  }

  @Test func lockedExcludesOtherThreads() async {
    let lock = Locked(0)
    // The probe runs while this thread holds the lock and waits for its answer.
    let whileHeld: Bool? = lock.withLock { _ in
      let probe = Channel<Bool>(capacity: 1, overflow: .wait)
      DetachedThread.start(name: "lock-probe") {
        probe.send(lock.withLockIfAvailable { _ in true } ?? false)
      }
      return probe.receive(timeoutMilliseconds: 30_000)
    }
    let afterRelease = await withCheckedContinuation { continuation in
      DetachedThread.start(name: "lock-probe") {
        continuation.resume(returning: lock.withLockIfAvailable { _ in true } ?? false)
      }
    }
    #expect(whileHeld == false)
    #expect(afterRelease)
  }
}
