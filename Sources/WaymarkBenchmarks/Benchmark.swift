import WaymarkProcess

/// One `waymark-bench` benchmark: its options and its run. `main.swift` lists the benchmarks by
/// name and parses the words after the name against ``options`` before calling ``run(_:)``.
protocol Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static var options: OptionTable { get }
  /// Runs the benchmark with its parsed command line.
  static func run(_ options: BenchmarkArguments) async throws
}
