import Foundation
import Testing
import WaymarkCore

@testable import WaymarkTraccar

@Suite struct OsmAndTests {
  private func parameters(_ query: String) -> [String: String] {
    var result: [String: String] = [:]
    for pair in query.split(separator: "&") {
      let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
      result[parts[0]] = parts.count > 1 ? parts[1].removingPercentEncoding : ""
    }
    return result
  }

  /// The query carries the protocol's parameters in its units: seconds, degrees, knots, metres.
  @Test func queryUsesTheProtocolsNamesAndUnits() throws {
    let fix = Fix(
      time: Date(timeIntervalSince1970: 1_800_000_000.75), mode: .threeDimensional, status: .gps,
      coordinate: Coordinate(latitude: -33.856_784_1, longitude: 151.215_297_2),
      altitudeMSL: 12.34, speed: 10, track: 271.25, horizontalError: 3.5, hdop: 0.9,
      satellitesUsed: 11)
    let query = try #require(OsmAnd.query(fix, deviceID: "van 7/ü&x"))
    let values = parameters(query)
    #expect(values["id"] == "van 7/ü&x")
    #expect(values["timestamp"] == "1800000000")
    #expect(values["lat"] == "-33.8567841")
    #expect(values["lon"] == "151.2152972")
    // 10 m/s is 19.438… knots.
    #expect(values["speed"] == "19.44")
    #expect(values["bearing"] == "271.3" || values["bearing"] == "271.2")
    #expect(values["altitude"] == "12.3")
    #expect(values["accuracy"] == "3.5")
    #expect(values["hdop"] == "0.90" || values["hdop"] == "0.9")
    #expect(values["sat"] == "11")
    #expect(values["valid"] == "true")
    // Only RFC 3986's unreserved characters and the separators appear raw.
    #expect(
      query.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-._~%&=".contains($0)) })
  }

  /// No time or no position: no query; unknown or non-finite values are left out; a 2D fix has
  /// no altitude.
  @Test func unknownAndExtremeValuesAreLeftOut() throws {
    var fix = Fix(
      time: Date(timeIntervalSince1970: 0), mode: .twoDimensional, status: .gps,
      coordinate: Coordinate(latitude: 1, longitude: 2), altitudeMSL: 5, speed: .nan,
      track: .infinity)
    let values = parameters(try #require(OsmAnd.query(fix, deviceID: "d")))
    #expect(values["speed"] == nil && values["bearing"] == nil && values["altitude"] == nil)
    #expect(values["accuracy"] == nil && values["sat"] == nil)
    fix.time = nil
    #expect(OsmAnd.query(fix, deviceID: "d") == nil)
    fix.time = Date(timeIntervalSince1970: 1e300)
    fix.coordinate = nil
    #expect(OsmAnd.query(fix, deviceID: "d") == nil)
  }

  /// The URL: http or https with a host; anything else refused (another scheme, spaces, a
  /// fragment, credentials in the URL). Plaintext is warned about unless the server is local.
  @Test func settingsTakeHTTPAndHTTPSURLsOnly() {
    for good in [
      "http://127.0.0.1:5055", "https://traccar.example.org:5055/", "HTTPS://h/path?x=1",
      "http://[::1]:5055",
    ] {
      #expect(TraccarSettings(url: good, deviceID: "d") != nil, "\(good)")
    }
    for bad in [
      "ftp://h", "h:5055", "http://", "http:///x", "http://h x", "http://h/#f", "http://u:p@h",
      "file:///etc/passwd", "http://h\n",
    ] {
      #expect(TraccarSettings(url: bad, deviceID: "d") == nil, "\(bad)")
    }
    #expect(TraccarSettings(url: "http://[::1]:5055", deviceID: "d")?.host == "::1")
    #expect(TraccarSettings(url: "http://127.0.0.1:5055", deviceID: "d")?.plaintextWarning == nil)
    #expect(TraccarSettings(url: "http://10.0.0.2:5055", deviceID: "d")?.plaintextWarning != nil)
    #expect(TraccarSettings(url: "https://10.0.0.2", deviceID: "d")?.plaintextWarning == nil)
  }
}
