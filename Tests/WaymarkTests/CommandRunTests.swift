import Foundation
import Testing
import WaymarkTesting

/// The tests' way to run a program: bounded, so that a program that hangs (or leaves a
/// descendant holding its output open) fails its test instead of hanging the run.
@Suite struct CommandRunTests {
  /// A grandchild keeps the output open after the child exits: the read never sees its end,
  /// so the call gives up at the timeout, kills the child and says what was written (had it
  /// waited for the grandchild, the output would have ended and nothing been thrown).
  @Test func aDescendantHoldingTheOutputEndsAtTheTimeout() throws {
    let error = #expect(throws: CommandRun.Timeout.self) {
      try CommandRun.run(
        "/bin/sh", ["-c", "sleep 30 & echo written; exit 0"], timeout: .seconds(1))
    }
    #expect(error?.output == "written\n")
    #expect(error?.description.contains("/bin/sh -c") == true)
  }

  /// A program that runs past its time is killed at the timeout.
  @Test func aProgramRunningPastItsTimeIsKilled() throws {
    #expect(throws: CommandRun.Timeout.self) {
      try CommandRun.run("/bin/sleep", ["30"], timeout: .milliseconds(300))
    }
  }

  /// The control: a program that ends in time gives its status and both outputs, whatever
  /// their sizes (more than a pipe holds, written to both at once).
  @Test func aProgramThatEndsInTimeGivesItsStatusAndOutputs() throws {
    let run = try CommandRun.run(
      "/bin/sh", ["-c", "head -c 300000 /dev/zero; head -c 200000 /dev/zero >&2; exit 3"],
      timeout: .seconds(30))
    #expect(run.status == 3)
    #expect(run.stdout.count == 300_000)
    #expect(run.stderr.utf8.count == 200_000)
    let input = try CommandRun.run("/bin/cat", [], input: Data("in".utf8))
    #expect(input.output == "in")
  }
}
