/// `waymark synthesize`: writes a synthetic NMEA log.
enum SynthesizeCommand: Command {
  static let name = "synthesize"
  static let summary = "Write a synthetic NMEA log from a route."
  static let help = "USAGE: waymark synthesize\n"
  static func run(_ arguments: [String]) async throws -> ExitCode { .ok }
}
