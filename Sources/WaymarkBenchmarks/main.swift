// waymark-bench: the benchmarks behind BENCHMARKS.md. Run in release:
//   swift run -c release waymark-bench <name> [options]
import Foundation

let benchmarks: [String: ([String]) async throws -> Void] = [
  "replay": ReplayBenchmark.run,
  "monitor": { PlaceMonitorBenchmark.run($0) },
  "store": StoreBenchmark.run,
  "gpsd": GPSDBenchmark.run,
  "manager": LocationManagerBenchmark.run,
  "daemon": DaemonBenchmark.run,
  "idle": IdleBenchmark.run,
  "broker": BrokerBenchmark.run,
  "mqtt": MQTTBenchmark.run,
  "track": TrackBenchmark.run,
  "map": MapBenchmark.run,
  "stays": StayBenchmark.run,
  "startup": StartupBenchmark.run,
]

let arguments = Array(CommandLine.arguments.dropFirst())
guard let name = arguments.first, let benchmark = benchmarks[name] else {
  let names = benchmarks.keys.sorted().joined(separator: "|")
  FileHandle.standardError.write(Data("usage: waymark-bench <\(names)> [options]\n".utf8))
  exit(64)
}
try await benchmark(Array(arguments.dropFirst()))
