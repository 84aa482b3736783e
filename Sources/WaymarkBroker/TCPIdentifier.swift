import Glibc
import WaymarkCore
import WaymarkIdentify

/// Identifies the peers of `nmea-tcp` connections on a thread of its own, so that the broker's
/// thread, which serves every client, never walks `/proc`.
///
/// A TCP peer's process is found by a walk of its user's descriptors
/// (``ProcFS/loopbackPeer(socket:netDirectory:budget:)``), which a user who holds many
/// descriptors can make long. So, in order: the broker limits the connections waiting here per
/// peer address and in all (``Limits``) when it accepts; this thread reads the owner's uid from
/// the TCP table (cheap) and refuses a user over ``Limits/walksPerSecondPerUser``; only then
/// does it walk, within a ``WalkBudget``. Its answers go back to the broker through its inbox
/// (``BrokerServer/Item/identified(_:_:)``); the broker applies its per-user connection quota
/// and the grants as for any peer.
final class TCPIdentifier: Sendable {
  /// The bounds of the identifications of one broker.
  struct Limits: Sendable {
    /// Connections waiting for an identification, in all.
    var maximumPending = 32
    /// Connections waiting for an identification, per peer address.
    var maximumPendingPerAddress = 8
    /// Walks of `/proc` per second per user, on average (a burst of twice that).
    var walksPerSecondPerUser: Double = 4
    /// What one walk may examine and take.
    var budget = WalkBudget()
  }

  let limits: Limits
  /// The thread, whose state is the walk rate of each user. Its queue refuses when full: the
  /// broker keeps within ``Limits/maximumPending`` before it submits, so a refusal is only a
  /// guard (the connection is closed), and the broker's thread never waits here.
  private let worker: Worker<[uid_t: LineRate]>
  private let answer: @Sendable (Int32, Result<PeerIdentity, PeerIdentity.Failure>) -> Void
  private let time: TimeSource

  /// Starts the thread; `answer` is called on it with each connection and its identity. The
  /// walk rate is measured on `time`.
  init(
    limits: Limits = Limits(), time: TimeSource = .system,
    answer: @escaping @Sendable (Int32, Result<PeerIdentity, PeerIdentity.Failure>) -> Void
  ) {
    self.limits = limits
    self.answer = answer
    self.time = time
    worker = Worker(
      threadName: "waymark-tcp-id", capacity: limits.maximumPending, overflow: .refuse
    ) { [:] }
  }

  /// Hands `descriptor` to the thread; `false` (nothing done) when its queue is full or it is
  /// stopping. The broker keeps within ``Limits/maximumPending``.
  func submit(_ descriptor: Int32) -> Bool {
    let (limits, time, answer) = (limits, time, answer)
    return worker.perform(
      { walks in answer(descriptor, Self.identify(descriptor, limits, time, &walks)) },
      ifDropped: { _ in close(descriptor) })
  }

  /// Ends the thread: the connections still waiting are closed unanswered (the broker is
  /// stopping), the one being identified is answered; waits at most `timeoutMilliseconds` for
  /// that.
  func stop(timeoutMilliseconds: Int = 2000) {
    worker.finish(.abandon, timeoutMilliseconds: timeoutMilliseconds)
  }

  /// The owner's uid first, its walk rate, then the walk.
  private static func identify(
    _ descriptor: Int32, _ limits: Limits, _ time: TimeSource, _ walks: inout [uid_t: LineRate]
  ) -> Result<PeerIdentity, PeerIdentity.Failure> {
    do throws(PeerIdentity.Failure) {
      let owner = try PeerIdentity.ownerOfLoopbackTCP(socket: descriptor)
      let now = time.now
      var rate =
        walks[owner.uid]
        ?? LineRate(
          perSecond: limits.walksPerSecondPerUser, burst: 2 * limits.walksPerSecondPerUser)
      let admitted = rate.take(1, at: now)
      walks[owner.uid] = rate
      if walks.count > 1024 { walks = walks.filter { $0.key == owner.uid } }
      guard admitted else {
        throw PeerIdentity.Failure(
          description:
            "uid \(owner.uid) connects faster than \(Int(limits.walksPerSecondPerUser)) a "
            + "second; not identified")
      }
      return .success(try PeerIdentity.ofLoopbackTCP(socket: descriptor, budget: limits.budget))
    } catch {
      return .failure(error)
    }
  }
}
