import Foundation
import Waymark

/// CoreLocation's `CLCondition`: a condition a ``CLMonitor`` evaluates.
///
/// Two exist, as on iOS: ``CLMonitor/CircularGeographicCondition`` (served: Waymark's circle)
/// and ``CLMonitor/BeaconIdentityCondition`` (accepted and reported
/// ``CLMonitor/Event/conditionUnsupported``: no Bluetooth beacons here).
public protocol CLCondition: Codable, Hashable, Sendable {}

extension Monitor.CircularGeographicCondition: CLCondition {}
