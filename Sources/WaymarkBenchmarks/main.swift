// Benchmarks; see BENCHMARKS.md.
if CommandLine.arguments.dropFirst().first == "monitor" { PlaceMonitorBenchmark.run() }
print("no benchmarks yet")
