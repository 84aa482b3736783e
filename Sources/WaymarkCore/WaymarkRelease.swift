/// The release of this source tree: what `waymark --version`, `waymarkd --version` and the
/// socket's `VERSION` say.
///
/// This is the one place the version is written. `Scripts/package-deb.sh` refuses to build a
/// package whose `packaging/debian/changelog` names another upstream version.
public enum WaymarkRelease {
  /// The upstream version, `major.minor.patch`.
  public static let version = "0.1.0"
}
