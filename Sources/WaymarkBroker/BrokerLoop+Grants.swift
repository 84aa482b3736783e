import FoundationEssentials
import Waymark
import WaymarkCore

extension BrokerLoop {
  // MARK: Grants

  /// Once `nextRefresh` is due: ends the watch's rest (a change it queued meanwhile is checked
  /// now), and checks the grants when a change was seen, or at every due time when the store
  /// cannot be watched; after a check with a watch, the watch rests until the next due time.
  func refreshIfChanged() {
    if watchResting, let changeWatch {
      watchResting = false
      if changeWatch.drain() { changePending = true }
    }
    guard changePending || changeWatch == nil else { return }
    refreshGrants()
    watchResting = changeWatch != nil
  }

  /// Re-reads the grants when the store says they may have changed (or `force`), ends the
  /// "once" answers of revoked clients, and tells every client whose state changed.
  func refreshGrants(force: Bool = false) {
    nextRefresh =
      clock.now + .milliseconds(Int64(saturating: configuration.grantRefreshSeconds * 1000))
    changePending = false
    let before = (servicesEnabled, grantsReadable)
    servicesEnabled = server.servicesSwitch.isEnabled
    var revoked: Set<String> = []
    do {
      let mark = try server.grantStore.changeMark()
      if force || mark == nil || mark != grantsMark || !grantsReadable {
        let fresh = Dictionary(
          try server.grantStore.allGrants().map { ($0.clientID, $0) }, uniquingKeysWith: { $1 })
        let revocations = try server.grantStore.revocations(after: revocationMark)
        if revocationMark != nil { revoked = Set(revocations.clientIDs) }
        revocationMark = revocations.mark
        grantsMark = mark
        // The mark moves with every write of another connection (the daemon's visits and
        // track too): only a change of the grants themselves is news for the daemon.
        if fresh != grants || !revoked.isEmpty { grantsChanged = true }
        grants = fresh
      }
      if !grantsReadable { server.write(.notice, "broker: grants readable again") }
      grantsReadable = true
    } catch {
      if grantsReadable {
        server.write(.warning, "broker: cannot read the grants: \(LogText.escaped("\(error)"))")
      }
      grantsReadable = false
      grantsMark = nil
    }
    if before != (servicesEnabled, grantsReadable) { grantsChanged = true }
    authorizeHeldMonitors()
    for client in clients.values {
      if !revoked.isEmpty, client.session.once != nil,
        revoked.contains("*") || revoked.contains(client.session.identity.clientID)
      {
        client.session.once = nil
      }
      update(&client.session)
      if client.kind == .nmea {
        let state = client.session.effective
        if client.session.disclosure(of: .position) == .withheld && !client.isClosing {
          client.isClosing = true
          server.write(.notice, "\(client.logName): \(state.status.rawValue); closed")
        }
        continue
      }
      if let change = client.session.authorizationChange() {
        server.write(
          .info, "\(client.logName): \(change.status.rawValue), \(change.accuracy.rawValue)")
        announce(change, to: client)
      }
    }
  }

  func update(_ session: inout BrokerSession) {
    session.servicesEnabled = servicesEnabled
    if !grantsReadable {
      session.stored = AuthorizationState(status: .restricted)
    } else {
      session.stored =
        grants[session.identity.clientID]?.state ?? AuthorizationState(status: .notDetermined)
    }
  }
}
