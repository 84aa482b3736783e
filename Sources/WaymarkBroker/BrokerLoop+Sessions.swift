import FoundationEssentials
import Waymark
import WaymarkCore

extension BrokerLoop {
  // MARK: Service sessions (protocol 1.3)

  /// `SESSION`: the connection holds a service session (or ends it). A session that needs a
  /// grant the connection lacks asks the agents, as `REQUEST` does, with its purpose; the
  /// answer is `AUTHORIZATION` (when the state is known now) and `SESSION`, and both again
  /// after every change while the session is held.
  func holdSession(_ options: DaemonRequest.SessionOptions?, for client: BrokerClient) {
    client.session.serviceSession = options
    guard let options else {
      send(DaemonMessage.session(DaemonMessage.Session.ended).line, to: client)
      return
    }
    if let level = options.level {
      // Announces (AUTHORIZATION, then SESSION) when no question is needed.
      if ask(level, for: client, purpose: options.purpose) { sendSession(to: client) }
    } else {
      sendSession(to: client)
    }
  }

  /// Sends `SESSION`: the session held and the state in force.
  func sendSession(to client: BrokerClient) {
    guard let options = client.session.serviceSession else { return }
    let state = client.session.effective
    // Asking only while the state still calls for the question: a grant recorded meanwhile
    // (`waymark auth grant`) settles it for the session before the question expires.
    let stillNeeded =
      switch state.status {
      case .notDetermined: true
      case .authorizedWhenInUse: options.level == .always
      case .restricted, .denied, .authorizedAlways: false
      }
    let asking =
      stillNeeded && questions.open.values.contains { $0.asker.connection == client.descriptor }
    let session = DaemonMessage.Session(
      authorization: options.level?.rawValue ?? "none", fullAccuracy: options.fullAccuracy,
      state: state, servicesEnabled: servicesEnabled, requestInProgress: asking)
    send(DaemonMessage.session(session).line, to: client)
  }
}
