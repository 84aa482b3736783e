// Benchmarks; see BENCHMARKS.md.
print("no benchmarks yet")
await LocationManagerBenchmark.main(CommandLine.arguments)  // waymark-bench manager
