import Foundation
import Waymark

/// CoreLocation's `CLBackgroundActivitySession`: a statement that the program goes on using
/// locations in the background.
///
/// A Linux program is never suspended, so holding a session changes nothing: a program
/// receives its locations while it runs, and `waymarkd` follows the receiver (and records
/// visits) while no program runs. The session exists so that iOS code compiles and runs; its
/// handler (``init(queue:handler:)``) hears one ``Diagnostic`` at once, on `queue`, when
/// location services are off on this machine, as iOS reports `authorizationDeniedGlobally`. A
/// program's own denial comes through its updates and its manager, as on iOS.
open class CLBackgroundActivitySession: NSObject, @unchecked Sendable {
  // @unchecked: `valid` is behind a lock.

  /// Why a background session does not give locations (iOS 18).
  public struct Diagnostic: Sendable, Hashable {
    /// The program's grant says never: not set by a session here (the program's updates and
    /// its manager say so, as on iOS).
    public var authorizationDenied = false
    /// Location services are off on this machine.
    public var authorizationDeniedGlobally = false
    /// Never on Linux: no device management restricts location services.
    public var authorizationRestricted = false
    /// Never on Linux: a running program is in use.
    public var insufficientlyInUse = false
    /// Never: a background session needs no service session on Linux.
    public var serviceSessionRequired = false
    /// Never: a background session asks nothing.
    public var authorizationRequestInProgress = false
  }

  private let valid = Locked(true)

  /// A session (iOS 17).
  public override init() {
    super.init()
  }

  /// A session whose diagnostics go to `handler` on `queue` (iOS 18): one diagnostic at once
  /// when location services are off on this machine, else none.
  public convenience init(
    queue: DispatchQueue,
    handler: @escaping @Sendable (CLBackgroundActivitySession.Diagnostic) -> Void
  ) {
    self.init()
    guard !AuthorizationCenter.shared.services.isEnabled else { return }
    let valid = self.valid
    queue.async {
      guard valid.withLock({ $0 }) else { return }
      handler(Diagnostic(authorizationDeniedGlobally: true))
    }
  }

  /// Ends the session; a diagnostic not yet delivered is not.
  open func invalidate() {
    valid.withLock { $0 = false }
  }
}
