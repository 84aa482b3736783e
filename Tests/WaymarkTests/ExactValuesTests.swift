import Foundation
import Testing

@testable import Waymark

@Suite struct ExactValuesTests {
  /// Decimals of at most 7 places are kept as 4-byte integers and come back as the very same
  /// `Double`s (bit for bit) that parsing their text gives.
  @Test func shortDecimalsAreCodedLosslessly() {
    let texts = ["48.1371234", "-122.4194155", "0.0000001", "-89.9999999", "179.9999999", "0"]
    let values = texts.map { Double($0)! }
    let stored = ExactValues(values, scale: 1e7)
    #expect(stored.byteCount == values.count * 4)
    #expect(stored.count == values.count)
    for (index, value) in values.enumerated() {
      #expect(stored[index].bitPattern == value.bitPattern, "\(texts[index])")
    }
  }

  /// One value that is not a whole number of steps (full precision, −0, out of range, NaN)
  /// keeps them all as `Double`s, still exact; the control beside it is coded.
  @Test(arguments: [1.0 / 3, -0.0, 3e9, .nan])
  func otherValuesKeepEveryDouble(odd: Double) {
    let values = [12.5, odd, 100]
    let stored = ExactValues(values, scale: 1e3)
    #expect(stored.byteCount == values.count * 8)
    for (index, value) in values.enumerated() {
      #expect(stored[index].bitPattern == value.bitPattern)
    }
    let control = ExactValues([12.5, 7.25, 100], scale: 1e3)
    #expect(control.byteCount == 3 * 4)
    #expect(control[1] == 7.25)
  }

  /// No values: nothing stored, nothing to read.
  @Test func empty() {
    let stored = ExactValues([], scale: 1e7)
    #expect(stored.count == 0)
    #expect(stored.byteCount == 0)
  }
}
