// Benchmarks; see BENCHMARKS.md.
if CommandLine.arguments.dropFirst().first == "gpsd" { await GPSDBenchmark.main() }
print("no benchmarks yet")
