import BuildStamp
import ShopAPI

/// What `--version` says: the version, and the commit `make release` stamped into the binary
/// (scripts/stamp-build.py). A binary built any other way says that it was not stamped.
enum BuildInfo {
    /// "3f9c2a1b7e40 2026-11-24", with "-dirty" after the id when the tree had uncommitted changes.
    static var commit: String? {
        guard let pointer = reiterate_build_stamp() else { return nil }
        let text = String(cString: pointer)
        return text.isEmpty || text == "unstamped" ? nil : text
    }

    static var versionLine: String {
        "reiterate-shop \(ShopClientConfiguration.appVersion) (" + (commit.map { "commit \($0)" } ?? "commit unknown: not built by make release") + ")"
    }
}
