import CEpoll
import Foundation
import Synchronization
import WaymarkCore
import WaymarkIdentify

/// Reads every watcher socket on one thread with epoll(7) and records, per watcher and epoch, when
/// the first TPV of that epoch arrived: CLOCK_MONOTONIC at the return of the read(2) that
/// completed the line. One read per readable socket per poll round, so a busy socket cannot
/// starve the others.
final class FanOutReader: Sendable {
  struct Arrivals: Sendable {
    /// `times[watcher][epoch]`: nanoseconds, 0 when no TPV of that epoch arrived.
    var times: [[Int64]]
    /// Sockets that reached end of file or failed.
    var closed: Int
    /// epoll_wait(2) calls that returned ready sockets, and read(2) calls that returned data.
    var polls: Int
    var reads: Int
    /// TPVs on kernel-timed sockets left unrecorded: the read held more after the TPV's line,
    /// so the receive time (of the read's last segment) might not be the TPV's.
    var untimed = 0
  }

  private let descriptors: [Int32]
  private let kernelTimed: Set<Int32>
  private let epochIndex: [Int64: Int]
  private let epochCount: Int
  private let stopping = Atomic<Bool>(false)
  private let withTPV = Atomic<Int>(0)
  private let result = Locked<Arrivals?>(nil)

  /// - Parameters:
  ///   - descriptors: non-blocking sockets of watchers.
  ///   - epochTimes: the time of day (milliseconds) of each measured epoch.
  ///   - kernelTimed: sockets with `SO_TIMESTAMPING` (receive, software): their arrival is the
  ///     kernel's receive time of the segment, not the read's return.
  init(descriptors: [Int32], epochTimes: [Int64], kernelTimed: Set<Int32> = []) {
    self.descriptors = descriptors
    self.kernelTimed = kernelTimed
    epochCount = epochTimes.count
    epochIndex = Dictionary(
      epochTimes.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
  }

  /// Watchers that have received at least one TPV.
  var watchersWithTPV: Int { withTPV.load(ordering: .relaxed) }

  func start() {
    DetachedThread.start(name: "bench-fan-out") { self.loop() }
  }

  /// Ends the thread and returns what it recorded.
  func stop() async -> Arrivals {
    stopping.store(true, ordering: .relaxed)
    while true {
      if let arrivals = result.withLock({ $0 }) { return arrivals }
      try? await Task.sleep(for: .milliseconds(5))
    }
  }

  private func loop() {
    // epoll: a wake-up costs the sockets that are ready, not (as with poll(2)) a registration
    // on every socket of the set, which with hundreds of watchers was most of the reader's CPU
    // and delayed the reads of the last sockets of each epoch.
    let poller = epoll_create1(Int32(EPOLL_CLOEXEC))
    defer { close(poller) }
    for (watcher, descriptor) in descriptors.enumerated() {
      var event = epoll_event()
      event.events = EPOLLIN.rawValue
      event.data.u64 = UInt64(watcher)
      epoll_ctl(poller, EPOLL_CTL_ADD, descriptor, &event)
    }
    var ready = [epoll_event](repeating: epoll_event(), count: max(1, descriptors.count))
    var pending = [[UInt8]](repeating: [], count: descriptors.count)
    var times = [[Int64]](
      repeating: [Int64](repeating: 0, count: epochCount), count: descriptors.count)
    var seen = [Bool](repeating: false, count: descriptors.count)
    var buffer = [UInt8](repeating: 0, count: 65536)
    var closed = 0
    var polls = 0
    var reads = 0
    var untimed = 0
    var control = [UInt8](repeating: 0, count: 512)
    // CLOCK_REALTIME (the kernel's timestamps) minus CLOCK_MONOTONIC, taken once.
    let realtimeOffset = Self.realtimeNanoseconds() - BrokerBenchmark.monotonicNanoseconds()
    while !stopping.load(ordering: .relaxed) {
      // Wakes for data, and every 250 ms to check `stop`.
      let readyCount = epoll_wait(poller, &ready, Int32(ready.count), 250)
      guard readyCount > 0 else { continue }
      polls += 1
      for index in 0..<Int(readyCount) {
        let watcher = Int(ready[index].data.u64)
        let descriptor = descriptors[watcher]
        let timed = kernelTimed.contains(descriptor)
        var kernelTime: Int64?
        let count =
          timed
          ? Self.receive(descriptor, &buffer, &control, kernelTime: &kernelTime)
          : read(descriptor, &buffer, buffer.count)
        var now = BrokerBenchmark.monotonicNanoseconds()
        if timed {
          guard let kernelTime else {
            if count > 0 { untimed += 1 }
            continue
          }
          now = kernelTime - realtimeOffset
        }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
        guard count > 0 else {
          closed += 1
          epoll_ctl(poller, EPOLL_CTL_DEL, descriptor, nil)
          continue
        }
        reads += 1
        // Usually whole lines arrive: they are scanned in the read buffer, only a trailing
        // partial line is kept.
        var chunk = buffer[..<count]
        if !pending[watcher].isEmpty {
          pending[watcher].append(contentsOf: chunk)
          chunk = pending[watcher][...]
        }
        var start = chunk.startIndex
        while let newline = chunk[start...].firstIndex(of: 0x0A) {
          let line = chunk[start..<newline]
          start = newline + 1
          guard line.starts(with: Self.tpvPrefix) else { continue }
          if !seen[watcher] {
            seen[watcher] = true
            withTPV.add(1, ordering: .relaxed)
          }
          guard let time = Self.timeOfDayMilliseconds(line), let epoch = epochIndex[time],
            times[watcher][epoch] == 0
          else { continue }
          if timed && newline != chunk.endIndex - 1 {
            untimed += 1
            continue
          }
          times[watcher][epoch] = now
        }
        pending[watcher] = Array(chunk[start...])
      }
    }
    result.withLock {
      $0 = Arrivals(times: times, closed: closed, polls: polls, reads: reads, untimed: untimed)
    }
  }

  /// CLOCK_REALTIME in nanoseconds.
  static func realtimeNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
  }

  /// recvmsg(2) into `buffer`; `kernelTime` is the software receive timestamp (CLOCK_REALTIME,
  /// ns) of the `SCM_TIMESTAMPING` control message, when there is one.
  static func receive(
    _ descriptor: Int32, _ buffer: inout [UInt8], _ control: inout [UInt8],
    kernelTime: inout Int64?
  ) -> Int {
    buffer.withUnsafeMutableBytes { data in
      control.withUnsafeMutableBytes { controlBytes in
        MessageHeader.with(data: data, control: controlBytes) { message in
          let count = recvmsg(descriptor, &message, 0)
          guard count > 0 else { return count }
          // struct cmsghdr { size_t len; int level; int type; } then the data, 8-byte aligned.
          var offset = 0
          let header = MemoryLayout<Int>.size + 2 * MemoryLayout<Int32>.size
          while offset + header <= Int(message.msg_controllen) {
            let length = controlBytes.load(fromByteOffset: offset, as: Int.self)
            let level = controlBytes.load(fromByteOffset: offset + 8, as: Int32.self)
            let type = controlBytes.load(fromByteOffset: offset + 12, as: Int32.self)
            guard length >= header else { break }
            if level == SOL_SOCKET && type == SO_TIMESTAMPING {
              // struct scm_timestamping { struct timespec ts[3]; }: ts[0] is the software one.
              let seconds = controlBytes.load(fromByteOffset: offset + header, as: Int.self)
              let nanoseconds = controlBytes.load(fromByteOffset: offset + header + 8, as: Int.self)
              if seconds != 0 || nanoseconds != 0 {
                kernelTime = Int64(seconds) * 1_000_000_000 + Int64(nanoseconds)
              }
            }
            offset += (length + 7) & ~7
          }
          return count
        }
      }
    }
  }

  private static let tpvPrefix = Array(#"{"class":"TPV""#.utf8)
  private static let timeKey = Array(#""time":""#.utf8)

  /// The time of day in milliseconds of a TPV line's `"time":"YYYY-MM-DDThh:mm:ss.sssZ"`.
  static func timeOfDayMilliseconds(_ line: ArraySlice<UInt8>) -> Int64? {
    var index = line.startIndex
    while index + timeKey.count <= line.endIndex {
      if line[index..<(index + timeKey.count)].elementsEqual(timeKey) { break }
      index += 1
    }
    // Skip `"time":"YYYY-MM-DDT`.
    index += timeKey.count + 11
    guard index + 8 <= line.endIndex else { return nil }
    func number(_ at: Int, _ digits: Int) -> Int64? {
      var value: Int64 = 0
      for offset in 0..<digits {
        let byte = line[at + offset]
        guard byte >= 0x30 && byte <= 0x39 else { return nil }
        value = value * 10 + Int64(byte - 0x30)
      }
      return value
    }
    guard let hours = number(index, 2), let minutes = number(index + 3, 2),
      let seconds = number(index + 6, 2)
    else { return nil }
    var milliseconds: Int64 = 0
    var scale: Int64 = 100
    var fraction = index + 9
    if index + 8 < line.endIndex && line[index + 8] == UInt8(ascii: ".") {
      while fraction < line.endIndex, scale > 0, let digit = number(fraction, 1) {
        milliseconds += digit * scale
        scale /= 10
        fraction += 1
      }
    }
    return ((hours * 60 + minutes) * 60 + seconds) * 1000 + milliseconds
  }
}
