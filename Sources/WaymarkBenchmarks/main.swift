// Benchmarks; see BENCHMARKS.md.
if CommandLine.arguments.dropFirst().first == "store" { try StoreBenchmark.main() }
print("no benchmarks yet")
