extension Double {
  /// The value with exactly `decimals` digits after the point, rounded half away from zero:
  /// what `String(format: "%.<decimals>f", value)` prints, without Foundation's formatter.
  public func fixed(_ decimals: Int) -> String {
    var bytes: [UInt8] = []
    JSONLine.appendFixed(self, decimals: decimals, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }
}
