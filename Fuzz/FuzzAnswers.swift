// Shared by the agent-rule fuzzers (Fuzz/AgentQuestionsFuzz.swift, Fuzz/BrokerInvariantFuzz.swift):
// an agent's answer from one input byte. Not part of the package.
import WaymarkCore

@testable import WaymarkBroker

/// The answer `byte` names: once or a lasting grant, full or reduced, or never.
func fuzzAnswer(_ byte: Int) -> DaemonRequest.AgentAnswer {
  let kind = byte % 5
  let accuracy: AccuracyAuthorization = kind % 2 == 0 ? .full : .reduced
  switch kind {
  case 0: return .once(accuracy)
  case 1: return .grant(.whenInUse, accuracy)
  case 2: return .grant(.always, accuracy)
  case 3: return .grant(.never, .full)
  default: return .once(.reduced)
  }
}
