import FoundationEssentials
import Glibc
import WaymarkIdentify

extension PeerIdentity {
  /// The owner of the peer's end of an accepted loopback TCP connection (`nmea-tcp`): its uid
  /// and inode, from the TCP table alone (``ProcFS/loopbackOwner(socket:netDirectory:)``),
  /// through `waymark-identify` when there is one (under the unit, waymarkd's `/proc` has no
  /// `net`), else read here.
  ///
  /// - Throws: ``Failure`` when the peer is not on the loopback network or has no row.
  package static func ownerOfLoopbackTCP(socket descriptor: Int32)
    throws(Failure) -> LoopbackOwner
  {
    var helperFailure: IdentifyFailure?
    if let tcpHelper {
      do {
        return try tcpHelper.owner(ofLoopbackTCP: descriptor)
      } catch {
        helperFailure = error
      }
    }
    do {
      return try ProcFS.loopbackOwner(socket: descriptor, netDirectory: "/proc/self/net")
    } catch {
      throw Failure(
        description: helperFailure.map { "waymark-identify: \($0); here: \(error)" }
          ?? error.description)
    }
  }

  /// The identity of the peer of an accepted loopback TCP connection (`nmea-tcp`), which the
  /// kernel does not attach to the socket as it does for Unix sockets: the row of the peer's own
  /// socket in `/proc/<pid>/net/tcp` or `tcp6` gives its owner's uid and inode, and the processes
  /// of that uid holding that inode among their `/proc/<pid>/fd`, within `budget`, give the
  /// executable (``ProcFS/loopbackPeer(socket:netDirectory:budget:)``; IPv4-mapped peers such as
  /// `::ffff:127.0.0.1` are found in `tcp6`).
  ///
  /// With `waymark-identify` the helper does the reading, on a connection of its own (a long
  /// walk never holds up the identification of the location socket's peers): it holds the
  /// capability other users' `/proc/<pid>/fd` needs, and its `/proc` is not limited to
  /// processes (`ProcSubset=pid` of waymarkd's unit hides `/proc/net`; the helper reads
  /// waymarkd's own `/proc/<pid>/net`). Without it, or when it cannot be asked, `/proc/self/net`
  /// is read here.
  ///
  /// Weaker than ``of(socket:)``: the kernel does not say which process connected. Every process
  /// holding the socket must run the same executable, or the peer is refused (a program that
  /// handed its socket to a child and then ran a granted file, a shell that started a program on
  /// it); a peer on another host has no identity here and is refused.
  ///
  /// - Throws: ``Failure`` when the peer is not on the loopback network, cannot be found, is
  ///   held by different programs, or the walk went over `budget`.
  package static func ofLoopbackTCP(socket descriptor: Int32, budget: WalkBudget = WalkBudget())
    throws(Failure) -> PeerIdentity
  {
    var helperFailure: IdentifyFailure?
    if let tcpHelper {
      do {
        return PeerIdentity(try tcpHelper.identify(.loopbackTCP, descriptor))
      } catch {
        helperFailure = error
      }
    }
    do {
      return PeerIdentity(
        try ProcFS.loopbackPeer(
          socket: descriptor, netDirectory: "/proc/self/net", budget: budget))
    } catch {
      throw Failure(
        description: helperFailure.map { "waymark-identify: \($0); here: \(error)" }
          ?? error.description)
    }
  }

  /// The helper's connection for TCP peers: apart from ``helper``'s, so that the walk of one
  /// never waits behind, or holds up, the other's questions.
  static let tcpHelper: IdentifyConnection? = {
    guard let path = getenv("WAYMARK_IDENTIFY"), path.pointee != 0 else { return nil }
    return IdentifyConnection(path: String(cString: path))
  }()

  private init(_ process: PeerProcess) {
    self.init(
      uid: process.uid, pid: process.pid, user: PeerIdentity.userName(process.uid),
      executable: process.executable, startTime: process.startTime)
  }
}
