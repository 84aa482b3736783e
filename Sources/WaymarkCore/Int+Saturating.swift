extension Int {
  /// `value` rounded toward zero and clamped to `Int.min...Int.max`; NaN gives 0. Unlike
  /// `Int(_:)`, it never traps: every conversion of a floating-point value that came from
  /// outside (a receiver, a broker, a file) goes through it.
  @inlinable
  public init(saturating value: Double) {
    // 2^63 is the first Double above Int.max; -2^63 is Int.min exactly.
    if value.isNaN {
      self = 0
    } else if value >= 9_223_372_036_854_775_808.0 {
      self = .max
    } else if value <= -9_223_372_036_854_775_808.0 {
      self = .min
    } else {
      self = Int(value)
    }
  }
}

extension Int64 {
  /// `value` rounded toward zero and clamped to `Int64.min...Int64.max`; NaN gives 0 (see
  /// `Int.init(saturating:)`).
  @inlinable
  public init(saturating value: Double) {
    self = Int64(Int(saturating: value))
  }
}
