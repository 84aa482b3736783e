import Testing
import WaymarkCore

@testable import Waymark

@Suite struct RadixSortTests {
  /// The radix sort orders as `sort()` does: index-like pairs (a 44-bit cell key over a
  /// circle number, few digits varying), full-width random values, repeats, and the trivial
  /// arrays; and it does reorder (the input was not sorted). Each of the first three is above
  /// the size under which a comparison sort is used instead.
  @Test func ordersAsTheComparisonSort() {
    var rng = SeededGenerator(seed: 5)
    let pairs: [UInt128] = (0..<20_000).map { circle in
      let key = UInt64.random(in: 0..<(1 << 44), using: &rng) & 0xF00_000F_FFFF
      return UInt128(key) << 32 | UInt128(circle)
    }
    let wide: [UInt128] = (0..<5_000).map { _ in
      UInt128(UInt64.random(in: 0...UInt64.max, using: &rng)) << 64
        | UInt128(UInt64.random(in: 0...UInt64.max, using: &rng))
    }
    let repeats: [UInt128] = (0..<6_000).map { _ in
      UInt128(UInt64.random(in: 0..<7, using: &rng)) << 100
    }
    for values in [pairs, wide, repeats, [], [42], [7, 7, 7], [3, 1, 2]] {
      var sorted = values
      sorted.radixSort()
      #expect(sorted == values.sorted())
    }
    #expect(pairs != pairs.sorted())
  }
}
