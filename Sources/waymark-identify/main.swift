// Trust boundary of waymark-identify, waymarkd's privilege-separated helper.
//
// Who may connect: its standard input is one connection (systemd's waymark-identify.socket,
// Accept=yes, a SOCK_SEQPACKET socket of mode 0600 owned by user waymark; or one end of a
// socketpair). The peer is identified by SO_PEERCRED: a peer whose uid is not that of the
// client user (`--client`, default waymark) gets no answer at all; the helper logs it and
// exits.
// What it answers: one question a message, a descriptor attached: a pidfd ("which process is
// this": pid, real uid, start time, executable path), or an accepted loopback TCP socket
// ("which process holds the other end", from the client's /proc/<pid>/net/tcp and tcp6 and
// the /proc/<pid>/fd of the socket owner's processes, within a WalkBudget; or only "who owns
// it", from the table alone). Nothing else: a malformed message ends the connection.
// Why it exists: reading another user's /proc/<pid>/exe and /proc/<pid>/fd takes
// CAP_SYS_PTRACE, which this process holds (its unit) so that waymarkd holds none. A
// compromised waymarkd can learn through it what `ps` would tell root (paths, pids, socket
// owners), never write to a process. It parses no outside text but /proc's own.
// Limits: one connection is one process (systemd starts one per connection); messages of at
// most 16 bytes; each answer is a bounded walk of /proc.

// Built with Embedded Swift (Package.swift): no Swift runtime, no Foundation, no Unicode
// tables; it maps glibc alone (libc and libm), as IdentifyHelperTests check. Its sources are
// WaymarkIdentify's (linked here, compiled again for Embedded Swift) and these.

import CHelperLibc

/// Writes one log line with a syslog priority prefix (journald reads it).
func log(_ priority: Int, _ text: String) {
  let line = Array("<\(priority)>waymark-identify: \(text)\n".utf8)
  _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

/// Whether `argument` is `option`, byte for byte.
func matches(_ argument: String, _ option: StaticString) -> Bool {
  argument.utf8.elementsEqual(
    UnsafeBufferPointer(start: option.utf8Start, count: option.utf8CodeUnitCount))
}

/// The user whose uid may ask (`--client`, default waymark); exits on a usage error.
func clientUser(_ arguments: [String]) -> String {
  var client = "waymark"
  var arguments = arguments.dropFirst()
  while let argument = arguments.popFirst() {
    if matches(argument, "--client") {
      guard let name = arguments.popFirst() else {
        log(3, "usage: waymark-identify [--client <user>]")
        exit(64)
      }
      client = name
    } else if matches(argument, "-h") || matches(argument, "--help") {
      print("usage: waymark-identify [--client <user>]  (one connection on standard input)")
      exit(0)
    } else {
      log(3, "usage: waymark-identify [--client <user>]")
      exit(64)
    }
  }
  return client
}

/// Answers the connection on standard input until it ends.
func serve(client: String) -> Never {
  let connection: Int32 = 0
  guard let entry = getpwnam(client) else {
    log(3, "no user '\(client)'")
    exit(78)
  }
  let clientUID = entry.pointee.pw_uid

  // struct ucred { pid_t pid; uid_t uid; gid_t gid; }
  var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
  var length = socklen_t(MemoryLayout.size(ofValue: credentials))
  guard getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
    credentials.0 > 0
  else {
    log(3, "standard input is not a connected Unix socket")
    exit(64)
  }
  guard credentials.1 == clientUID else {
    log(4, "refused a peer of uid \(credentials.1) (pid \(credentials.0)): only \(client) may ask")
    exit(77)
  }
  // The client's network namespace: the one its accepted TCP sockets live in.
  let netDirectory = "/proc/\(credentials.0)/net"

  while true {
    guard let message = DescriptorMessage.receive(on: connection, capacity: 16) else {
      if errno == EINTR { continue }
      log(4, "ended the connection: \(String(cString: strerror(errno)))")
      exit(1)
    }
    guard message.bytes.count == 1, let request = IdentifyRequest(rawValue: message.bytes[0]),
      let descriptor = message.descriptor
    else {
      if let descriptor = message.descriptor { close(descriptor) }
      if message.bytes.isEmpty { exit(0) }  // end of stream: waymarkd closed the connection
      log(4, "ended the connection: malformed request")
      exit(1)
    }
    let answer: [UInt8]
    do {
      answer =
        switch request {
        case .pidfd: try ProcFS.process(pidfd: descriptor).wire
        case .loopbackTCP:
          try ProcFS.loopbackPeer(socket: descriptor, netDirectory: netDirectory).wire
        case .loopbackTCPOwner:
          try ProcFS.loopbackOwner(socket: descriptor, netDirectory: netDirectory).wire
        }
    } catch {
      answer = PeerProcess.failureWire(error)
    }
    close(descriptor)
    guard DescriptorMessage.send(answer, descriptor: nil, on: connection) else {
      log(4, "ended the connection: \(String(cString: strerror(errno)))")
      exit(1)
    }
  }
}

serve(client: clientUser(commandLineArguments()))
