import Foundation
import Testing
import WaymarkCore

@Suite struct JSONLineTests {
  @Test func keepsKeyOrderAndFixedDecimals() {
    var line = JSONLine(class: "TPV")
    line.add("mode", 3)
    line.add("lat", -45.5, decimals: 9)
    line.add("speed", 0.0004, decimals: 3)
    line.add("missing", nil as Double?, decimals: 3)
    line.add("name", "a \"quoted\"\nname")
    #expect(
      line.string
        == #"{"class":"TPV","mode":3,"lat":-45.500000000,"speed":0.000,"name":"a \"quoted\"\nname"}"#
    )
  }

  @Test func fixedDecimalsMatchFoundationFormatting() {
    for value in [0.0, 1.5, -1.5, 123.456789, -0.0000001, 99.9995, 1e-9, 179.123456789] {
      var bytes: [UInt8] = []
      JSONLine.appendFixed(value, decimals: 6, to: &bytes)
      let ours = String(decoding: bytes, as: UTF8.self)
      let reference = String(format: "%.6f", value)
      // Foundation rounds half to even on the binary value; compare numerically.
      #expect(abs(Double(ours)! - Double(reference)!) <= 1.0e-6, "\(value): \(ours)")
    }
  }

  @Test func outputIsValidJSON() throws {
    var line = JSONLine(class: "X")
    line.add("control", "\u{01}tab\t")
    line.add("when", Date(timeIntervalSince1970: 0))
    let object = try JSONSerialization.jsonObject(with: Data(line.closed)) as? [String: Any]
    #expect(object?["control"] as? String == "\u{01}tab\t")
    #expect(object?["when"] as? String == "1970-01-01T00:00:00.000Z")
  }
}
