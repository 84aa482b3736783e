import Foundation

/// CoreLocation's `CLLocationPushServiceExtension`: an extension that answers a location push
/// from the Apple Push Notification service.
///
/// Linux has no such service: the protocol exists so that the extension's code compiles, and
/// nothing calls it. ``CLLocationManager/startMonitoringLocationPushes(completion:)`` reports
/// ``CLLocationPushServiceError/Code/unsupportedPlatform``.
public protocol CLLocationPushServiceExtension: NSObjectProtocol {
  /// Called with a push's payload; call `completion` when done.
  func didReceiveLocationPushPayload(
    _ payload: [String: Any], completion: @escaping () -> Void)
  /// Called before the extension is ended.
  func serviceExtensionWillTerminate()
}

extension CLLocationPushServiceExtension {
  /// Does nothing (optional in CoreLocation's protocol).
  public func serviceExtensionWillTerminate() {}
}

// swift-format-ignore: AlwaysUseLowerCamelCase
/// CoreLocation's `CLLocationPushServiceErrorDomain`.
public let CLLocationPushServiceErrorDomain = "CLLocationPushServiceErrorDomain"

/// CoreLocation's `CLLocationPushServiceError`: why location pushes cannot be monitored.
public struct CLLocationPushServiceError: Error, CustomNSError, Hashable, Sendable {
  /// CoreLocation's codes, with its raw values.
  public enum Code: Int, Sendable, Hashable {
    /// An unknown error.
    case unknown = 0
    /// The program lacks the push entitlement.
    case missingAPSEntitlement = 1
    /// The program has no push service extension.
    case missingPushExtension = 2
    /// The push server environment is not set.
    case missingPushServerEnvironment = 3
    /// The platform has no location push service: what Linux reports.
    case unsupportedPlatform = 4
  }

  /// The error's code.
  public let code: Code

  /// An error with `code`.
  public init(_ code: Code) { self.code = code }

  /// ``CLLocationPushServiceErrorDomain``.
  public static var errorDomain: String { CLLocationPushServiceErrorDomain }
  /// The code's raw value.
  public var errorCode: Int { code.rawValue }
  /// No extra information.
  public var errorUserInfo: [String: Any] { [:] }
}
