import Glibc
import Testing

@testable import WaymarkDaemon

/// Regression (fault campaign, load stage): under systemd's soft limit of 1,024 descriptors
/// the daemon refused clients near a thousand as "gone" (it could not open their
/// `/proc/<pid>/stat`). It raises its soft limit for `socket-clients`, and serves no more
/// clients than a lower hard limit allows.
@Suite struct DescriptorLimitTests {
  @Test func theSoftLimitIsRaisedForTheClientsUpToTheHardLimit() {
    #expect(DescriptorLimit.target(clients: 1024, soft: 1024, hard: 524_288) == 1088)
    #expect(DescriptorLimit.target(clients: 1024, soft: 1024, hard: 1024) == 1024)
    #expect(DescriptorLimit.target(clients: 10, soft: 20_000, hard: 20_000) == 20_000)
    #expect(DescriptorLimit.clients(allowedBy: 1024) == 960)
    #expect(DescriptorLimit.clients(allowedBy: 1088) == 1024)
    #expect(DescriptorLimit.clients(allowedBy: 10) == 0)
  }

  @Test func raiseLeavesRoomForTheClients() {
    let limit = DescriptorLimit.raise(forClients: 2000)
    var now = rlimit()
    #expect(getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &now) == 0)
    #expect(UInt64(now.rlim_cur) == limit.after)
    #expect(limit.after >= limit.before)
    #expect(limit.after >= min(2064, UInt64(now.rlim_max)))
  }
}
