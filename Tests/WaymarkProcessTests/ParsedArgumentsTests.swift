import Testing
import WaymarkProcess

/// The one argument parser of waymark, waymarkd and waymark-bench, against a declared table.
@Suite struct ParsedArgumentsTests {
  static let table = OptionTable(
    column: 20,
    [
      .value("--speed", "<factor>", "Replay speed."),
      .value("--socket", "<path>", default: "/run/waymark/waymark.sock", "The socket."),
      .value("--wait", "<seconds>", default: "1", "Wait (default 1)."),
      .flag("--fixes", "Print fixes."),
      .value("--name", "<n>", nil),
    ])

  static func usageMessage(_ words: [String]) -> String? {
    do {
      _ = try ParsedArguments(words, declared: table)
      return nil
    } catch let error as CommandError {
      #expect(error.code == .usage)
      #expect(error.showsUsage)
      return error.message
    } catch {
      Issue.record("unexpected error \(error)")
      return nil
    }
  }

  @Test func valuesFollowTheirNameOrAnEqualsSign() throws {
    let parsed = try ParsedArguments(
      ["log.nmea", "--speed", "10", "--socket=/tmp/s", "--fixes", "--name", "home"],
      declared: Self.table)
    #expect(parsed.value("--speed") == "10")
    #expect(parsed.value("--socket") == "/tmp/s")
    #expect(parsed.value("--name") == "home")
    #expect(parsed.has("--fixes"))
    #expect(parsed.positionals == ["log.nmea"])
  }

  @Test func theLastValueWinsAndDashDashEndsTheOptions() throws {
    let parsed = try ParsedArguments(
      ["--speed", "2", "--speed", "3", "--", "--fixes", "-"], declared: Self.table)
    #expect(parsed.value("--speed") == "3")
    #expect(!parsed.has("--fixes"))
    #expect(parsed.positionals == ["--fixes", "-"])
  }

  @Test func declaredDefaultsApplyOnlyWhenTheOptionIsNotGiven() throws {
    let bare = try ParsedArguments([], declared: Self.table)
    #expect(bare.value("--socket") == nil)
    #expect(bare.value(orDefault: "--socket") == "/run/waymark/waymark.sock")
    #expect(try bare.double(orDefault: "--wait") == 1)
    #expect(try bare.double("--speed") == nil)
    let given = try ParsedArguments(["--socket", "/tmp/s", "--wait", "2.5"], declared: Self.table)
    #expect(given.value(orDefault: "--socket") == "/tmp/s")
    #expect(try given.double(orDefault: "--wait") == 2.5)
  }

  @Test func helpIsAlwaysKnown() throws {
    #expect(try ParsedArguments(["-h"], declared: Self.table).has("--help"))
    #expect(try ParsedArguments(["--help"], declared: Self.table).has("--help"))
    #expect(try !ParsedArguments([], declared: Self.table).has("--help"))
  }

  @Test func wrongLinesAreUsageErrorsThatNameTheOption() throws {
    #expect(Self.usageMessage(["--speed", "2"]) == nil)
    #expect(Self.usageMessage(["--sped", "2"]) == "Unknown option '--sped'.")
    #expect(Self.usageMessage(["--speed"]) == "Missing value for '--speed'.")
    #expect(Self.usageMessage(["--fixes=yes"]) == "'--fixes' takes no value.")
    #expect(Self.usageMessage(["--fixes"]) == nil)
  }

  @Test func numbersAndPositionalsAreChecked() throws {
    let parsed = try ParsedArguments(["--speed", "fast", "a", "b"], declared: Self.table)
    #expect(throws: CommandError.self) { try parsed.double("--speed") }
    #expect(try parsed.requirePositionals(["<a>", "<b>"]) == ["a", "b"])
    #expect(throws: CommandError.self) { try parsed.requirePositionals(["<a>"]) }
    #expect(throws: CommandError.self) { try parsed.requirePositionals(["<a>", "<b>", "<c>"]) }
  }
}
