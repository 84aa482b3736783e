import Glibc
import Testing
import WaymarkProcess

/// Context switches read from `/proc/<pid>/task/<tid>/status`.
@Suite struct ThreadSwitchesTests {
  @Test func aStatusTextGivesBothCounts() {
    let status = """
      Name:\tbroker
      State:\tS (sleeping)
      voluntary_ctxt_switches:\t1234
      nonvoluntary_ctxt_switches:\t56

      """
    let switches = ThreadSwitches(status: status)
    #expect(switches.voluntary == 1234)
    #expect(switches.involuntary == 56)
    #expect(switches.total == 1290)
    #expect(
      ThreadSwitches(status: "Name:\tx\nvoluntary_ctxt_switches:\tmany\n") == ThreadSwitches())
  }

  /// This process's threads: the calling one among them, its wake-ups counted as it sleeps.
  @Test func thisProcessThreadsCountTheirWakeUps() throws {
    // "/proc/thread-self" links to "<pid>/task/<tid>" of the calling thread.
    var link = [UInt8](repeating: 0, count: 64)
    let length = readlink("/proc/thread-self", &link, link.count)
    #expect(length > 0)
    let target = String(decoding: link.prefix(max(0, length)), as: UTF8.self)
    let me = try #require(Int32(target.split(separator: "/").last ?? ""))
    let before = try #require(ThreadSwitches.threads(of: getpid())[me])
    for _ in 0..<5 { usleep(1000) }
    let after = try #require(ThreadSwitches.threads(of: getpid())[me])
    #expect(!after.name.isEmpty && !after.name.hasSuffix("\n"))
    #expect(after.switches.voluntary >= before.switches.voluntary + 5)
    #expect(ThreadSwitches.threads(of: -1).isEmpty, "no such process")
  }
}
