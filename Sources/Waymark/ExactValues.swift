/// An immutable array of `Double`s that holds them as 32-bit integers when every value is a
/// whole number of `1 / scale` — a coordinate with at most 7 decimals at scale 10⁷, a radius in
/// millimetres at scale 10³, as imported places have them — and as `Double`s otherwise.
///
/// Lossless either way: a value is coded only if `Double(code) / scale` gives back the same
/// bits (that division is correctly rounded, so it yields the `Double` nearest the decimal,
/// which is what parsing the decimal yielded).
struct ExactValues: Sendable {
  /// The values as whole numbers of `1 / scale`, or empty when they are kept as `values`.
  let codes: [Int32]
  /// The values, or empty when they are kept as `codes`.
  let values: [Double]
  let scale: Double

  /// Stores `values`, coded at `scale` when all of them allow it.
  init(_ values: [Double], scale: Double) {
    self.scale = scale
    var codes: [Int32] = []
    codes.reserveCapacity(values.count)
    for value in values {
      let scaled = (value * scale).rounded()
      guard scaled >= -2_147_483_647, scaled <= 2_147_483_647,
        (Double(Int32(scaled)) / scale).bitPattern == value.bitPattern
      else {
        self.codes = []
        self.values = values
        return
      }
      codes.append(Int32(scaled))
    }
    self.codes = codes
    self.values = []
  }

  /// The values of a snapshot: `codes` at `scale` when `values` is empty, else `values`;
  /// `nil` when both hold values.
  init?(codes: [Int32], values: [Double], scale: Double) {
    guard codes.isEmpty || values.isEmpty else { return nil }
    self.codes = codes
    self.values = values
    self.scale = scale
  }

  /// Number of values.
  var count: Int { codes.isEmpty ? values.count : codes.count }

  /// Value `index`.
  @inline(__always)
  subscript(index: Int) -> Double {
    codes.isEmpty ? values[index] : Double(codes[index]) / scale
  }

  /// Approximate heap bytes.
  var byteCount: Int { codes.capacity * 4 + values.capacity * 8 }
}
