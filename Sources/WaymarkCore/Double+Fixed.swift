extension Double {
  /// The value with exactly `decimals` digits after the point, rounded half away from zero:
  /// what `String(format: "%.<decimals>f", value)` prints, without Foundation's formatter,
  /// except that a negative value that rounds to zero prints `0` without a sign, and that the
  /// last digit is decided on the product `value × 10^decimals`, so within about 1e-4 of a
  /// rounding tie it may differ from printf's exact decimal expansion.
  public func fixed(_ decimals: Int) -> String {
    var bytes: [UInt8] = []
    JSONLine.appendFixed(self, decimals: decimals, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }
}
