import WaymarkCore

/// The JSON object stored for an `EventReason` when the caller gives none.
///
/// Keys: `rule`, `distance` (m), `accuracy` (m, absent when unknown), `enterRadius` (m),
/// `exitRadius` (m), `confirmations`, `dwell` (s).
public enum EventReasonJSON {
  /// `reason` as a compact JSON object with keys in a fixed order.
  public static func encode(_ reason: EventReason) -> String {
    var line = JSONLine()
    line.add("rule", reason.rule)
    line.add("distance", reason.distanceMeters, decimals: 1)
    line.add("accuracy", reason.horizontalAccuracyMeters, decimals: 1)
    line.add("enterRadius", reason.enterRadiusMeters, decimals: 1)
    line.add("exitRadius", reason.exitRadiusMeters, decimals: 1)
    line.add("confirmations", reason.confirmations)
    line.add("dwell", reason.dwellSeconds, decimals: 3)
    return line.string
  }
}
