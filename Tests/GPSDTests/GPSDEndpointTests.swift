import GPSD
import Testing
import WaymarkCore

@Suite struct GPSDEndpointTests {
  @Test(
    arguments: [
      ("", "localhost", 2947, nil),
      ("localhost", "localhost", 2947, nil),
      ("gps.local:3000", "gps.local", 3000, nil),
      ("127.0.0.1:2947:/dev/ttyACM0", "127.0.0.1", 2947, "/dev/ttyACM0"),
      (":4000", "localhost", 4000, nil),
      ("::/dev/ttyUSB1", "localhost", 2947, "/dev/ttyUSB1"),
      ("[::1]:2948:/dev/pts/3", "::1", 2948, "/dev/pts/3"),
    ] as [(String, String, Int, String?)])
  func parses(text: String, host: String, port: Int, device: String?) throws {
    let endpoint = try #require(GPSDEndpoint(parsing: text))
    #expect(endpoint.host == host)
    #expect(Int(endpoint.port) == port)
    #expect(endpoint.device == device)
  }

  @Test(arguments: ["host:notaport", "host:0", "host:70000", "[::1"])
  func rejectsBadPorts(text: String) {
    #expect(GPSDEndpoint(parsing: text) == nil)
  }

  @Test func descriptionRoundTrips() throws {
    for text in ["localhost:2947", "10.0.0.2:3000:/dev/ttyACM0", "[::1]:2947"] {
      #expect(try #require(GPSDEndpoint(parsing: text)).description == text)
    }
  }
}

@Suite struct ReconnectPolicyTests {
  @Test func growsExponentiallyUpToTheCap() {
    let policy = ReconnectPolicy(
      initialDelay: .milliseconds(100), maximumDelay: .seconds(1), multiplier: 2, jitter: 0)
    let delays = (1...8).map { policy.baseDelay(attempt: $0) }
    let expected: [Duration] = [
      .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
      .seconds(1), .seconds(1), .seconds(1), .seconds(1),
    ]
    for (delay, want) in zip(delays, expected) {
      #expect(abs((delay - want) / .nanoseconds(1)) < 1, "\(delay) != \(want)")
    }
  }

  @Test func jitterStaysWithinItsFractionAndIsSeeded() {
    let policy = ReconnectPolicy(
      initialDelay: .seconds(1), maximumDelay: .seconds(8), multiplier: 2, jitter: 0.5)
    var first = SeededGenerator(seed: 42)
    var second = SeededGenerator(seed: 42)
    var seen: Set<Duration> = []
    for attempt in 1...20 {
      let delay = policy.delay(attempt: attempt, using: &first)
      let base = policy.baseDelay(attempt: attempt)
      #expect(delay <= base)
      #expect(delay >= base / 2)
      #expect(delay == policy.delay(attempt: attempt, using: &second))
      seen.insert(delay)
    }
    #expect(seen.count > 10)  // the jitter really varies
  }
}
