import Testing

@Suite struct GPSDTestsPlaceholder {
  @Test func targetBuilds() { #expect(Bool(true)) }
}
