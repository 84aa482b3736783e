/// `waymark replay`: replays an NMEA log through the pipeline.
enum ReplayCommand: Command {
  static let name = "replay"
  static let summary = "Replay an NMEA log through the pipeline (fixes, place events)."
  static let help = "USAGE: waymark replay <log> [--fixes] [--speed <factor>|max] [--strict]\n"
  static func run(_ arguments: [String]) async throws -> ExitCode { .ok }
}
