import Glibc

/// A detached POSIX thread for blocking work (a `gps_read` loop, a terminal prompt, child
/// processes), started without Foundation's `Thread`.
public enum DetachedThread {
  /// Runs `body` on a new detached thread.
  ///
  /// - Parameters:
  ///   - name: The thread's name as `top -H` and `/proc/<pid>/task/*/comm` show it; Linux keeps
  ///     the first 15 bytes.
  ///   - body: The work; the thread ends when it returns.
  /// - Precondition: the thread can be created (fails only when the process is out of threads
  ///   or memory).
  public static func start(name: String, _ body: @escaping @Sendable () -> Void) {
    let payload = Unmanaged.passRetained(Payload(name: name, body: body)).toOpaque()
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
    var thread = pthread_t()
    let status = pthread_create(&thread, &attributes, detachedThreadMain, payload)
    pthread_attr_destroy(&attributes)
    precondition(status == 0, "pthread_create failed with error \(status)")
  }

  fileprivate final class Payload: Sendable {
    let name: String
    let body: @Sendable () -> Void

    init(name: String, body: @escaping @Sendable () -> Void) {
      self.name = name
      self.body = body
    }

    /// Glibc's module does not export `pthread_setname_np`; `/proc/thread-self/comm` is the
    /// same kernel interface. Naming is best effort.
    func nameCurrentThread() {
      let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
      guard descriptor >= 0 else { return }
      defer { close(descriptor) }
      let bytes = Array(name.utf8.prefix(15))
      _ = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
    }
  }
}

private func detachedThreadMain(_ raw: UnsafeMutableRawPointer?) -> UnsafeMutableRawPointer? {
  guard let raw else { return nil }
  let payload = Unmanaged<DetachedThread.Payload>.fromOpaque(raw).takeRetainedValue()
  payload.nameCurrentThread()
  payload.body()
  return nil
}
