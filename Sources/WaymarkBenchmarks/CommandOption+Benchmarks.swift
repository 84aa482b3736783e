import WaymarkProcess

/// Options that several benchmarks share, declared once for all of them.
extension CommandOption {
  /// `--daemon <path>`: the waymarkd a benchmark runs (``BenchmarkArguments/executable(_:option:)``).
  static let daemon = CommandOption.value(
    "--daemon", "<path>", "The waymarkd to measure (default: the one next to this one).")

  /// `--dir <path>`: where a benchmark writes its stores.
  static let directory = CommandOption.value(
    "--dir", "<path>", "Where the stores go (default: the temporary directory).")
}
