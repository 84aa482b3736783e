// What an iPhone without Bluetooth beacons or a location push service answers, written as
// Apple's "Ranging for beacons", "Determining the proximity to an iBeacon device" and
// "Creating a location push service extension" pages write the calls: each answer is a
// delegate call or a completion on the main queue. Compiled with only the import line changed.
import CoreLocation

final class BeaconFinder: NSObject, CLLocationManagerDelegate {
  let manager = CLLocationManager()
  let uuid = UUID(uuidString: "E2C56DB5-DFFB-48D2-B060-D0F5A71096E0")!
  var answers = 0
  var session: CLBackgroundActivitySession?

  func start() {
    manager.delegate = self
    session = CLBackgroundActivitySession()
    print("monitoring \(CLLocationManager.isMonitoringAvailable(for: CLBeaconRegion.self))")
    let constraint = CLBeaconIdentityConstraint(uuid: uuid, major: 1, minor: 2)
    let region = CLBeaconRegion(beaconIdentityConstraint: constraint, identifier: "lobby")
    region.notifyEntryStateOnDisplay = true
    let major = region.major?.intValue ?? -1
    let minor = region.minor?.intValue ?? -1
    print("region \(region.uuid == uuid) \(major) \(minor)")
    manager.startMonitoring(for: region)
    manager.startRangingBeacons(satisfying: constraint)
    manager.startMonitoringLocationPushes { token, error in
      if let error = error as? CLLocationPushServiceError, error.code == .unsupportedPlatform {
        print("pushes unsupportedPlatform \(token == nil)")
      }
      self.answered()
    }
    print("ranged \(manager.rangedBeaconConstraints.count)")
  }

  func locationManager(
    _ manager: CLLocationManager, monitoringDidFailFor region: CLRegion?, withError error: Error
  ) {
    let code = (error as? CLError)?.code
    print("monitoring failed \(region?.identifier ?? "-") \(code == .regionMonitoringFailure)")
    answered()
  }

  func locationManager(
    _ manager: CLLocationManager, didFailRangingFor beaconConstraint: CLBeaconIdentityConstraint,
    error: Error
  ) {
    let code = (error as? CLError)?.code
    print("ranging failed \(beaconConstraint.major ?? 0) \(code == .rangingUnavailable)")
    answered()
  }

  func locationManager(
    _ manager: CLLocationManager, didRange beacons: [CLBeacon],
    satisfying beaconConstraint: CLBeaconIdentityConstraint
  ) {
    print("ranged \(beacons.count)")
  }

  func answered() {
    answers += 1
    if answers == 3 {
      session?.invalidate()
      print("done")
      exit(0)
    }
  }
}

let finder = BeaconFinder()
finder.start()
dispatchMain()
