import Testing

@Suite struct WaymarkTestsPlaceholder {
  @Test func targetBuilds() { #expect(Bool(true)) }
}
