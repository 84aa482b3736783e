import FoundationEssentials
import Glibc
import WaymarkIdentify

extension PeerIdentity {
  /// The identity of the peer of an accepted loopback TCP connection (`nmea-tcp`), which the
  /// kernel does not attach to the socket as it does for Unix sockets: the row of the peer's own
  /// socket in `/proc/<pid>/net/tcp` or `tcp6` gives its owner's uid and inode, and the process
  /// holding that inode among its `/proc/<pid>/fd` gives the executable
  /// (``ProcFS/loopbackPeer(socket:netDirectory:)``; IPv4-mapped peers such as
  /// `::ffff:127.0.0.1` are found in `tcp6`).
  ///
  /// With `waymark-identify` (``helper``) the helper does the reading: it holds the capability
  /// other users' `/proc/<pid>/fd` needs, and its `/proc` is not limited to processes
  /// (`ProcSubset=pid` of waymarkd's unit hides `/proc/net`; the helper reads waymarkd's own
  /// `/proc/<pid>/net`). Without it, or when it cannot be asked, `/proc/self/net` is read here.
  ///
  /// Weaker than ``of(socket:)``: when several processes share the socket (a shell that
  /// connected and the program it started), the one that connected is named
  /// (``ProcFS/namedHolder(among:)``); a peer on another host has no identity here and is
  /// refused.
  ///
  /// - Throws: ``Failure`` when the peer is not on the loopback network or cannot be found.
  public static func ofLoopbackTCP(socket descriptor: Int32) throws(Failure) -> PeerIdentity {
    var helperFailure: IdentifyFailure?
    if let helper {
      do {
        return PeerIdentity(try helper.identify(.loopbackTCP, descriptor))
      } catch {
        helperFailure = error
      }
    }
    do {
      return PeerIdentity(
        try ProcFS.loopbackPeer(socket: descriptor, netDirectory: "/proc/self/net"))
    } catch {
      throw Failure(
        description: helperFailure.map { "waymark-identify: \($0); here: \(error)" }
          ?? error.description)
    }
  }

  private init(_ process: PeerProcess) {
    self.init(
      uid: process.uid, pid: process.pid, user: PeerIdentity.userName(process.uid),
      executable: process.executable, startTime: process.startTime)
  }
}
