import Foundation
import Testing
import WaymarkIdentify

@testable import WaymarkBroker

/// Loopback TCP peers (`nmea-tcp`) identified from `/proc/self/net/tcp` and `tcp6` with real
/// sockets of this process: the peer found must be this test process itself.
@Suite(.serialized) struct PeerIdentityTests {
  /// A listener on 127.0.0.1 (as `nmea-tcp` has), its port, and the accepted end of a
  /// connection from a client socket of `family` to `address`.
  private static func connection(from family: Int32, to address: String) throws -> (
    client: Int32, accepted: Int32
  ) {
    let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(listener) }
    var local = sockaddr_in()
    local.sin_family = sa_family_t(AF_INET)
    local.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    try withUnsafeMutablePointer(to: &local) {
      try $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        guard bind(listener, $0, length) == 0, listen(listener, 4) == 0,
          getsockname(listener, $0, &length) == 0
        else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
      }
    }
    let client = socket(family, Int32(SOCK_STREAM.rawValue), 0)
    var status: Int32
    if family == AF_INET6 {
      var remote = sockaddr_in6()
      remote.sin6_family = sa_family_t(AF_INET6)
      remote.sin6_port = local.sin_port
      _ = inet_pton(AF_INET6, address, &remote.sin6_addr)
      status = withUnsafePointer(to: &remote) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(client, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
        }
      }
    } else {
      var remote = local
      remote.sin_addr.s_addr = inet_addr(address)
      status = withUnsafePointer(to: &remote) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
    }
    guard status == 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    let accepted = accept(listener, nil, nil)
    guard accepted >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
    return (client, accepted)
  }

  private static var ownExecutable: String {
    (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? ""
  }

  /// The positive control: a plain IPv4 client of 127.0.0.1 is this process.
  @Test func anIPv4PeerIsThisProcess() throws {
    let (client, accepted) = try Self.connection(from: AF_INET, to: "127.0.0.1")
    defer {
      close(client)
      close(accepted)
    }
    let identity = try PeerIdentity.ofLoopbackTCP(socket: accepted)
    #expect(identity.pid == getpid())
    #expect(identity.uid == getuid())
    #expect(identity.executable == Self.ownExecutable)
  }

  /// The walk for a socket's holders stops at its budget: with room for fewer descriptors than
  /// this process holds it fails, saying why, and with the default one it finds this process
  /// (the control). Its owner alone, from the TCP table, needs no walk.
  @Test func theWalkForAHolderStopsAtItsBudget() throws {
    let (client, accepted) = try Self.connection(from: AF_INET, to: "127.0.0.1")
    defer {
      close(client)
      close(accepted)
    }
    let open = try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count
    #expect(open > 4)
    #expect {
      try ProcFS.loopbackPeer(
        socket: accepted, netDirectory: "/proc/self/net",
        budget: WalkBudget(maximumDescriptors: 2))
    } throws: { "\($0)".contains("more than 2 descriptors to search") }
    let found = try ProcFS.loopbackPeer(socket: accepted, netDirectory: "/proc/self/net")
    #expect(found.pid == getpid())
    let owner = try ProcFS.loopbackOwner(socket: accepted, netDirectory: "/proc/self/net")
    #expect(owner.uid == getuid() && owner.inode > 0)
    #expect(try LoopbackOwner.decode(owner.wire) == owner)
  }

  /// A socket shared by a shell and the program it started is named after the shell that
  /// connected, even when the program has the lower pid (pids wrap around: in a CI run the
  /// shell was 32,7xx and its `cat` 300, and the first holder in `/proc` was the `cat`) and
  /// started in the same clock tick. The controls: unrelated holders go by start time, then pid.
  @Test func aSharedSocketIsNamedAfterTheShellThatConnectedAcrossAPidWrap() {
    let shell = (pid: pid_t(32_761), start: UInt64(5_000), parent: pid_t(32_700))
    let program = (pid: pid_t(300), start: UInt64(5_000), parent: pid_t(32_761))
    #expect(ProcFS.namedHolder(among: [program, shell])?.pid == shell.pid)
    #expect(ProcFS.namedHolder(among: [shell, program])?.pid == shell.pid)
    let older = (pid: pid_t(32_762), start: UInt64(4_000), parent: pid_t(1))
    #expect(ProcFS.namedHolder(among: [shell, older, program])?.pid == older.pid)
    let twin = (pid: pid_t(301), start: UInt64(5_000), parent: pid_t(1))
    #expect(ProcFS.namedHolder(among: [shell, twin])?.pid == twin.pid)
    #expect(ProcFS.namedHolder(among: [])?.pid == nil)
  }

  /// A client that connected from an IPv6 socket to `::ffff:127.0.0.1` has its row in
  /// `/proc/net/tcp6` (with the mapped address), not in `tcp`: it is found there.
  @Test func anIPv4MappedPeerIsFoundInTCP6() throws {
    let (client, accepted) = try Self.connection(from: AF_INET6, to: "::ffff:127.0.0.1")
    defer {
      close(client)
      close(accepted)
    }
    let identity = try PeerIdentity.ofLoopbackTCP(socket: accepted)
    #expect(identity.pid == getpid())
    #expect(identity.uid == getuid())
    #expect(identity.executable == Self.ownExecutable)
  }
}
