import Waymark
import WaymarkCore

/// What the daemon's main loop reacts to, one at a time.
enum DaemonInput: Sendable {
  /// Fixes arrived in the pipeline's inbox (which holds them: this is only the wake-up).
  case fixes
  case health(SourceHealth)
  case signal(Int32)
  /// The grants or the location-services switch changed (the broker saw the store change).
  case grantsChanged
  case waypoints([Place])
}
