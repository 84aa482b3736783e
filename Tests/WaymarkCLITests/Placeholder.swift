import Testing

@Suite struct WaymarkCLITestsPlaceholder {
  @Test func targetBuilds() { #expect(Bool(true)) }
}
