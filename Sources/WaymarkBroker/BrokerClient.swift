import Glibc
import WaymarkCore

/// One connection, owned by the broker's thread: its session, its buffers, its budgets.
final class BrokerClient {
  let descriptor: Int32
  let kind: BrokerClientKind
  var session: BrokerSession
  /// Root or a member of the deciders' group: its answers as an agent persist.
  let mayPersist: Bool
  /// The lines it may still send.
  var lineRate: LineRate
  var input: [UInt8] = []
  var output: [UInt8] = []
  var outputOffset = 0
  var isClosing = false

  init(
    descriptor: Int32, kind: BrokerClientKind, identity: PeerIdentity, mayPersist: Bool,
    lineRate: LineRate
  ) {
    self.descriptor = descriptor
    self.kind = kind
    self.mayPersist = mayPersist
    self.lineRate = lineRate
    session = BrokerSession(identity: identity)
  }

  var pendingBytes: Int { output.count - outputOffset }

  /// The client as the agent rules see it.
  var peer: AgentQuestions.Peer {
    AgentQuestions.Peer(
      connection: descriptor, identity: session.identity, isAgent: session.isAgent,
      mayPersist: mayPersist, isScripted: session.isScriptedAgent)
  }

  /// `client <id> (pid <pid>)`, escaped for a log line.
  var logName: String {
    (kind == .nmea ? "NMEA client " : "client ")
      + "\(LogText.escaped(session.identity.clientID)) (pid \(session.identity.pid))"
  }
}
