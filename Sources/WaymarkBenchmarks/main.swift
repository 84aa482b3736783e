// Benchmarks; see BENCHMARKS.md.
print("no benchmarks yet")
