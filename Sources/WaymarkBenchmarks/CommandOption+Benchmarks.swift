import WaymarkProcess

/// Options that several benchmarks share, declared once for all of them.
extension CommandOption {
  /// `--daemon <path>`: the waymarkd a benchmark runs (``BenchmarkArguments/daemon``).
  static let daemon = CommandOption.value(
    "--daemon", "<path>", "The waymarkd to measure (default: the one next to this one).")

  /// `--dir <path>`: where a benchmark writes its stores.
  static let directory = CommandOption.value(
    "--dir", "<path>", "Where the stores go (default: the temporary directory).")

  /// `--rate <hz>`: the epochs per second of a drive through gpsd.
  static let rate = number("--rate", "<hz>", default: "10", "Epochs per second")

  /// `--rounds <n>`: rounds of a benchmark that reports its best.
  static let rounds = number("--rounds", default: "3", "Rounds; the best is reported")

  /// `--places <n>`: the places in a benchmark's store.
  static func places(default value: String) -> CommandOption {
    number("--places", default: value, "Places in the store")
  }

  /// An option with a default value whose help is `what` followed by the default, so that the
  /// default is written once: `number("--runs", default: "5", "Interleaved rounds")` lists as
  /// `--runs <n>  Interleaved rounds (default 5).`
  static func number(
    _ name: String, _ placeholder: String = "<n>", default value: String, _ what: String
  ) -> CommandOption {
    .value(name, placeholder, default: value, "\(what) (default \(value)).")
  }
}
