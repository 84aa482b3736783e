import WaymarkProcess

extension OptionTable {
  /// A benchmark's options: every benchmark's `--help` starts their help texts at column 24.
  static func benchmark(_ options: [CommandOption]) -> OptionTable {
    OptionTable(column: 24, options)
  }
}
