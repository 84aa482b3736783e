// waymark-bench: the benchmarks behind BENCHMARKS.md. Run in release:
//   swift run -c release waymark-bench <name> [options]
import Foundation

let benchmarks: [String: any Benchmark.Type] = [
  "replay": ReplayBenchmark.self,
  "import": ImportBenchmark.self,
  "monitor": PlaceMonitorBenchmark.self,
  "store": StoreBenchmark.self,
  "gpsd": GPSDBenchmark.self,
  "manager": LocationManagerBenchmark.self,
  "daemon": DaemonBenchmark.self,
  "idle": IdleBenchmark.self,
  "broker": BrokerBenchmark.self,
  "mqtt": MQTTBenchmark.self,
  "track": TrackBenchmark.self,
  "map": MapBenchmark.self,
  "stays": StayBenchmark.self,
  "startup": StartupBenchmark.self,
  "gazetteer": GazetteerBenchmark.self,
]

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, let benchmark = benchmarks[name] else {
  let names = benchmarks.keys.sorted().joined(separator: "|")
  FileHandle.standardError.write(Data("usage: waymark-bench <\(names)> [options]\n".utf8))
  exit(64)
}
try await benchmark.run(
  BenchmarkArguments(Array(arguments.dropFirst()), benchmark: name, declared: benchmark.options))
