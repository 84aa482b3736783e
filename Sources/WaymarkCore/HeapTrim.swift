import Glibc

/// Gives free heap memory back to the kernel (glibc's `malloc_trim(0)`, found at run time: the
/// Glibc module does not export it). A long-running process calls it after a large transient
/// allocation (every place read at once, a large message sent), which glibc otherwise keeps in
/// its arenas. A no-op where the function does not exist.
public enum HeapTrim {
  private typealias Trim = @convention(c) (Int) -> Int32

  private static let trim: Trim? = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else {
      return nil
    }
    return unsafeBitCast(symbol, to: Trim.self)
  }()

  /// Returns free memory of every arena to the kernel.
  public static func release() { _ = trim?(0) }
}
