import Testing
import WaymarkProcess

/// The `OPTIONS:` listing rendered from the declarations.
@Suite struct OptionTableTests {
  @Test func labelsPadToTheColumnAndLongOnesTakeALineOfTheirOwn() {
    let table = OptionTable(
      column: 24,
      [
        .value(
          "--places", "<geojson>",
          """
          Monitor these places: print ARRIVAL and DEPARTURE objects (NDJSON)
          on stdout, each with the reason it fired.
          """),
        .flag("--fixes", "Print one TPV object per epoch."),
        .value("--mqtt-client-id", "<id>", "MQTT client id."),
        .value("--visit-min-duration", "<s>", "Seconds a stay must last."),
        .value("--name", "<n>", nil),
      ])
    #expect(
      table.listing == """
          --places <geojson>    Monitor these places: print ARRIVAL and DEPARTURE objects (NDJSON)
                                on stdout, each with the reason it fired.
          --fixes               Print one TPV object per epoch.
          --mqtt-client-id <id> MQTT client id.
          --visit-min-duration <s>
                                Seconds a stay must last.
          -h, --help            Show this help.

        """)
    #expect(
      table.names == [
        "--places", "--fixes", "--mqtt-client-id", "--visit-min-duration",
        "--name", "--help",
      ])
    #expect(table["--name"]?.takesValue == true)
    #expect(table["--fixes"]?.takesValue == false)
    #expect(table["--nothing"] == nil)
  }
}
