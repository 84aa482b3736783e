// Benchmarks; see BENCHMARKS.md.
if CommandLine.arguments.count > 1, CommandLine.arguments[1] == "gpsd" { await GPSDBenchmark.main() }
print("no benchmarks yet")
