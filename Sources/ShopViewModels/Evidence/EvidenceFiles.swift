import Foundation
import ShopAPI
import ShopCache
import TerminalText

/// Where `R` and `e` write: set by the program (`$XDG_STATE_HOME/reiterate-shop/…`, `--har FILE`).
public struct EvidenceFiles: Sendable, Equatable {
    /// Bug reports go here (created 0700; each file 0600).
    public var reportsDirectory: String?
    /// `--har FILE`: the program writes it when it ends; `e` writes a snapshot beside it (`FILE-<time>.har`).
    public var harFile: String?
    /// Without `--har`, `e` writes `session-<time>.har` here.
    public var harDirectory: String?
    public var version: String

    public init(reportsDirectory: String? = nil, harFile: String? = nil, harDirectory: String? = nil, version: String = ShopClientConfiguration.appVersion) {
        self.reportsDirectory = reportsDirectory
        self.harFile = harFile
        self.harDirectory = harDirectory
        self.version = version
    }

    /// `$XDG_STATE_HOME/reiterate-shop` (default `~/.local/state/reiterate-shop`), as the cache finds its own.
    public static func stateDirectory(environment: [String: String]) -> String {
        AppDirectory.path("XDG_STATE_HOME", default: ".local/state", environment: environment)
    }
}

// The files themselves: each new (never over another), 0600, written whole, in words when it fails.
extension EvidenceFiles {
    /// A bug report (`R`): `report-<time>.md` in the reports folder.
    func writeReport(_ text: String, at: Date) async -> Result<String, EvidenceError> {
        guard let folder = reportsDirectory else { return .failure(EvidenceError("No folder for bug reports: set XDG_STATE_HOME or HOME.")) }
        return await Self.writeNew(Data(text.utf8), folder: folder, stem: BugReport.fileStem(at: at), suffix: ".md")
            .mapError { _ in EvidenceError("The bug report could not be written: check that \(Sanitizer.line(folder)) is a writable folder.") }
    }

    /// The session as HAR (`e`): a snapshot of its own beside the `--har` file (never that file, which
    /// the program writes when it ends: two writers renaming over one file could leave the older last),
    /// or `session-<time>.har` in the HAR folder.
    func writeHAR(_ data: Data, at: Date) async -> Result<String, EvidenceError> {
        let time = BugReport.fileStem(at: at).dropFirst("report-".count)
        let place: (folder: String, stem: String)?
        if let harFile {
            let url = URL(fileURLWithPath: harFile)
            place = (url.deletingLastPathComponent().path, url.deletingPathExtension().lastPathComponent + "-" + time)
        } else {
            place = harDirectory.map { ($0, "session-" + time) }
        }
        guard let place else { return .failure(EvidenceError("No folder for the HAR file: give --har FILE, or set XDG_STATE_HOME or HOME.")) }
        return await Self.writeNew(data, folder: place.folder, stem: place.stem, suffix: ".har")
            .mapError { _ in EvidenceError("The HAR file could not be written: check that \(Sanitizer.line(place.folder)) is a writable folder.") }
    }

    /// A curl line (`c` with no clipboard): `curl-<time>.sh` in the reports folder (the line holds
    /// `$REITERATE_TOKEN`, never the token).
    func saveCurl(_ command: String, at: Date) async -> Result<String, EvidenceError> {
        guard let folder = reportsDirectory else { return .failure(EvidenceError("no folder for it: set XDG_STATE_HOME or HOME.")) }
        let stem = "curl-" + BugReport.fileStem(at: at).dropFirst("report-".count)
        return await Self.writeNew(Data((command + "\n").utf8), folder: folder, stem: stem, suffix: ".sh")
            .mapError { _ in EvidenceError("it could not be written to a file: check that \(Sanitizer.line(folder)) is a writable folder.") }
    }

    /// Writes `data` as a new file `stem.suffix` (or `stem-2.suffix`, …) in `folder`, 0600, atomically.
    /// The name is claimed with O_EXCL first, so two reports in the same second never share a file.
    static func writeNew(_ data: Data, folder: String, stem: String, suffix: String) async -> Result<String, EvidenceError> {
        let claimed: String? = await Task.detached {
            guard (try? AtomicFile.ensureDirectory(folder)) != nil else { return nil }
            for n in 1...1000 {
                let path = n == 1 ? "\(folder)/\(stem)\(suffix)" : "\(folder)/\(stem)-\(n)\(suffix)"
                let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
                if fd >= 0 {
                    close(fd)
                    return path
                }
                if errno != EEXIST { return nil }
            }
            return nil
        }.value
        guard let path = claimed else { return .failure(EvidenceError("cannot create a file in \(folder)")) }
        let result: Result<String, EvidenceError> = await Task.detached {
            do {
                try AtomicFile.write(data, to: path, directory: folder)
                return .success(path)
            } catch {
                return .failure(EvidenceError("cannot write \(path)"))
            }
        }.value
        if case .failure = result { unlink(path) }  // no empty file left behind
        return result
    }
}
