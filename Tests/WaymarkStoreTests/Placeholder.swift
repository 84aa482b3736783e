import Testing

@Suite struct WaymarkStoreTestsPlaceholder {
  @Test func targetBuilds() { #expect(Bool(true)) }
}
