import FoundationEssentials
import WaymarkClient
import WaymarkCore

/// The work of one ``ServiceSession``: asks for its need on its source and reports each
/// diagnosis, until its task is cancelled.
struct ServiceSessionWorker: Sendable {
  let requirement: ServiceSession.AuthorizationRequirement
  let purpose: String?
  let reports: Broadcast<ServiceSession.Diagnostic>

  func run(on source: LiveSource) async {
    switch source.kind {
    case .automatic(let socketPath, _, let clientID, let center):
      if let service = await DaemonLocationService.answering(at: socketPath) {
        await run(service)
      } else {
        await run(center, clientID: clientID)
      }
    case .daemon(let socketPath):
      if let service = try? await DaemonLocationService(socketPath: socketPath) {
        await run(service)
      }
    case .local(_, let clientID, let center):
      await run(center, clientID: clientID)
    }
    reports.finish()
  }

  /// Over waymarkd: `SESSION`, then the daemon's `SESSION` answers (one after every change).
  private func run(_ service: DaemonLocationService) async {
    let messages = service.messages
    service.holdSession(
      level: requirement.level, fullAccuracy: purpose != nil, purpose: purpose)
    await withTaskCancellationHandler {
      for await message in messages {
        guard case .session(let answer) = message else { continue }
        reports.send(
          ServiceSession.Diagnostic(
            requirement: requirement, wantsFullAccuracy: purpose != nil, state: answer.state,
            servicesEnabled: answer.servicesEnabled,
            requestInProgress: answer.requestInProgress))
      }
    } onCancel: {
      service.close()
    }
    service.close()
  }

  /// In this process: the center's question, then its state at each change.
  private func run(_ center: AuthorizationCenter, clientID: String) async {
    let (changes, change) = AsyncStream.makeStream(
      of: Void.self, bufferingPolicy: .bufferingNewest(1))
    let token = center.addObserver { changed in
      if changed == clientID { change.yield() }
    }
    defer { center.removeObserver(token) }
    let report = { (asking: Bool) in
      reports.send(
        ServiceSession.Diagnostic(
          requirement: requirement, wantsFullAccuracy: purpose != nil,
          state: center.state(for: clientID), servicesEnabled: center.services.isEnabled,
          requestInProgress: asking))
    }
    let status = center.state(for: clientID).status
    if let level = requirement.level,
      status == .notDetermined || (status == .authorizedWhenInUse && level == .always)
    {
      report(true)
      _ = await center.request(level, for: clientID, purpose: purpose)
    }
    report(false)
    for await _ in changes { report(false) }
  }
}
