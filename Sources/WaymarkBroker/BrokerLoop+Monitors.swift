import FoundationEssentials
import Glibc
import Waymark
import WaymarkCore

// Held monitors (protocol 1.3, `MONITOR`): an app with `always` and full accuracy registers
// circles the daemon evaluates on every fix, also while the app is not running, and reads
// their events from its cursor. Trust boundary: the monitor's key is the peer's uid and
// client id from the kernel at accept (BrokerServer's opening comment), never a name the peer
// gives, so another user's program, or another program of the same user, cannot read or
// change it. A peer without the grant gets an ERROR and nothing else. Limits (HeldMonitor): a
// name, identifier or group of at most 64 bytes without control characters, 64 conditions per
// monitor, 4 monitors per app and 16 per uid, 1,000 events queued per monitor (the oldest
// dropped and counted as lost), pages of 200 events, and 20 changes a second per uid (bursts
// of 40), each change being one fsync'd write.

extension BrokerLoop {
  // MARK: Held monitors

  func handleMonitor(
    _ name: String, _ operation: DaemonRequest.MonitorOperation, from client: BrokerClient
  ) {
    guard let keeper = server.heldMonitors else {
      fail(client, "MONITOR: this daemon holds no monitors")
      return
    }
    guard client.kind == .broker, client.session.mayHoldMonitors else {
      let state = client.session.effective
      fail(
        client,
        "MONITOR: not authorized (\(state.status.rawValue), \(state.accuracy.rawValue)): a held "
          + "monitor needs always with full accuracy")
      return
    }
    let identity = client.session.identity
    let key = HeldMonitor.Key(uid: identity.uid, clientID: identity.clientID, name: name)
    switch operation {
    case .add, .remove, .delete:
      var rate =
        monitorChanges[identity.uid]
        ?? LineRate(perSecond: HeldMonitor.changesPerSecond, burst: HeldMonitor.changeBurst)
      let admitted = rate.take(1, at: clock.now)
      monitorChanges[identity.uid] = rate
      guard admitted else {
        fail(
          client,
          "MONITOR: too many changes: over \(Int(HeldMonitor.changesPerSecond)) a second "
            + "for this user")
        return
      }
    case .events, .acknowledge:
      break
    }
    do throws(HeldMonitor.Refusal) {
      switch operation {
      case .add(let conditions):
        let count = try keeper.add(conditions.map(HeldMonitor.Condition.init), to: key)
        answer(name, "add", conditions: count, to: client)
      case .remove(let identifiers):
        let count = try keeper.remove(identifiers, from: key)
        answer(name, "remove", conditions: count, to: client)
      case .delete:
        try keeper.delete(key)
        client.session.heldReads[name] = nil
        answer(name, "delete", conditions: 0, to: client)
      case .events(let after):
        let cursor = Int64(after)
        let backlog = try keeper.events(of: key, after: cursor)
        var last = max(cursor, client.session.heldReads[name]?.lastSent ?? 0)
        for event in backlog.events where event.sequence > last {
          send(Self.eventLine(event), to: client)
          last = event.sequence
        }
        client.session.heldReads[name] = (last, !backlog.more)
        let page = DaemonMessage.HeldMonitorAnswer(
          name: name, operation: "events", last: Int(last), lost: Int(backlog.lost),
          more: backlog.more, next: Int(backlog.next))
        send(DaemonMessage.heldMonitor(page).line, to: client)
      case .acknowledge(let sequence):
        try keeper.acknowledge(key, through: Int64(sequence))
      }
    } catch {
      fail(client, "MONITOR: \(error.message)")
    }
  }

  private func answer(_ name: String, _ operation: String, conditions: Int, to client: BrokerClient)
  {
    let answer = DaemonMessage.HeldMonitorAnswer(
      name: name, operation: operation, conditionCount: conditions)
    send(DaemonMessage.heldMonitor(answer).line, to: client)
  }

  /// `MONITOR_EVENT`: one event of a held monitor.
  static func eventLine(_ event: HeldMonitor.Event) -> [UInt8] {
    let message = DaemonMessage.HeldMonitorEvent(
      name: event.key.name, sequence: Int(event.sequence), identifier: event.identifier,
      isSatisfied: event.state == .satisfied, date: event.date)
    return DaemonMessage.heldMonitorEvent(message).line
  }

  /// Sends live events to the connections of their app that read their monitor, caught up,
  /// and still hold the grant; an event already sent (in a backlog page) is not sent again.
  func deliverHeld(_ events: [HeldMonitor.Event]) {
    for client in clients.values
    where client.kind == .broker && !client.session.heldReads.isEmpty
      && client.session.mayHoldMonitors
    {
      let identity = client.session.identity
      for event in events
      where event.key.uid == identity.uid && event.key.clientID == identity.clientID {
        guard let read = client.session.heldReads[event.key.name], read.caughtUp,
          event.sequence > read.lastSent
        else { continue }
        send(Self.eventLine(event), to: client)
        client.session.heldReads[event.key.name] = (event.sequence, true)
      }
    }
  }

  /// Tells the keeper which client ids hold `always` with full accuracy, when that changed.
  func authorizeHeldMonitors() {
    guard let keeper = server.heldMonitors else { return }
    let authorized: Set<String> =
      servicesEnabled && grantsReadable
      ? Set(
        grants.values.filter {
          Disclosure.release(.whereabouts, under: $0.state, isOperator: false) == .full
        }.map(\.clientID))
      : []
    guard authorized != heldAuthorized else { return }
    heldAuthorized = authorized
    keeper.authorize(authorized)
  }
}
