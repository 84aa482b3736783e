import Foundation
import Testing

@testable import Waymark

@Suite struct ExactValuesTests {
  /// Decimals of at most 7 places are kept as 4-byte integers and come back as the very same
  /// `Double`s (bit for bit) that parsing their text gives.
  @Test func shortDecimalsAreCodedLosslessly() {
    let texts: [String] = Array(
      Array(
        repeating: ["48.1371234", "-122.4194155", "0.0000001", "-89.9999999", "179.9999999", "0"],
        count: 100
      ).joined())
    let values = texts.map { Double($0)! }
    let stored = ExactValues(values, scale: 1e7)
    // 4 bytes a value, plus the allocator's rounding of the capacity.
    #expect(stored.byteCount < values.count * 5)
    #expect(stored.count == values.count)
    for (index, value) in values.enumerated() {
      #expect(stored[index].bitPattern == value.bitPattern, "\(texts[index])")
    }
  }

  /// One value that is not a whole number of steps (full precision, −0, out of range, NaN)
  /// keeps them all as `Double`s, still exact; the control beside it is coded.
  @Test(arguments: [1.0 / 3, -0.0, 3e9, .nan])
  func otherValuesKeepEveryDouble(odd: Double) {
    var values = (0..<1000).map { Double($0) / 4 }
    let control = ExactValues(values, scale: 1e3)
    #expect(control.byteCount < values.count * 5)
    #expect(control[501] == 125.25)
    values[500] = odd
    let stored = ExactValues(values, scale: 1e3)
    #expect(stored.byteCount >= values.count * 8)
    for (index, value) in values.enumerated() {
      #expect(stored[index].bitPattern == value.bitPattern)
    }
  }

  /// No values: nothing stored, nothing to read.
  @Test func empty() {
    let stored = ExactValues([], scale: 1e7)
    #expect(stored.count == 0)
    #expect(stored.byteCount == 0)
  }
}
