import FoundationEssentials
import WaymarkCore

extension Monitor {
  /// A circle on the ground, CoreLocation's `CLMonitor.CircularGeographicCondition`: satisfied
  /// while the device is confirmed inside it.
  ///
  /// Detection is the place monitor's (docs/guide/places-and-visits.md, "Detection"): the
  /// condition becomes satisfied when fixes inside `radius` are confirmed and unsatisfied when
  /// fixes beyond the exit radius are. The options are a place's detection overrides; `nil`
  /// means the monitor configuration's default.
  public struct CircularGeographicCondition: Sendable, Hashable, Codable {
    /// Centre of the circle.
    public var center: Coordinate
    /// Radius within which the device counts as inside, metres.
    public var radius: Double
    /// Radius beyond which the device counts as out, metres (at least `radius`); `nil` for the
    /// configuration's default (a factor of `radius` or a margin, whichever is larger).
    public var exitRadius: Double?
    /// Consecutive fixes needed to confirm a change of state; `nil` for the default.
    public var confirmations: Int?
    /// Seconds of fix time a change of state must hold before it is confirmed; `nil` for the
    /// default.
    public var dwellSeconds: Double?
    /// The group of circles this one belongs to; with `overlap` `.nearest`, a fix inside several
    /// circles of the group counts only for the nearest.
    public var group: String?
    /// How the circles of `group` share a fix; `nil` means `.all`.
    public var overlap: PlaceOverlap?

    /// Creates a circle.
    ///
    /// - Parameters:
    ///   - center: Centre of the circle.
    ///   - radius: Enter radius, metres.
    ///   - exitRadius: Exit radius, metres; `nil` for the default.
    ///   - confirmations: Fixes needed to confirm a change; `nil` for the default.
    ///   - dwellSeconds: Seconds of fix time a change must hold; `nil` for the default.
    ///   - group: The circle's group, if any.
    ///   - overlap: How the circles of `group` share a fix; `nil` means `.all`.
    public init(
      center: Coordinate, radius: Double, exitRadius: Double? = nil, confirmations: Int? = nil,
      dwellSeconds: Double? = nil, group: String? = nil, overlap: PlaceOverlap? = nil
    ) {
      self.center = center
      self.radius = radius
      self.exitRadius = exitRadius
      self.confirmations = confirmations
      self.dwellSeconds = dwellSeconds
      self.group = group
      self.overlap = overlap
    }

    /// The place the place monitor watches for this condition.
    func place(identifier: String) -> Place {
      Place(
        id: identifier, name: identifier, coordinate: center, radiusMeters: radius,
        detection: PlaceDetectionOverrides(
          exitRadiusMeters: exitRadius, confirmations: confirmations, dwellSeconds: dwellSeconds,
          group: group, overlap: overlap))
    }
  }
}
