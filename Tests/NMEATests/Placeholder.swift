import Testing

@Suite struct NMEATestsPlaceholder {
  @Test func targetBuilds() { #expect(Bool(true)) }
}
