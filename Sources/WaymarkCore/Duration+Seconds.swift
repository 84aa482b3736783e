extension Duration {
  /// The duration in seconds, as a `Double`.
  public var seconds: Double {
    let parts = components
    return Double(parts.seconds) + Double(parts.attoseconds) * 1e-18
  }
}
