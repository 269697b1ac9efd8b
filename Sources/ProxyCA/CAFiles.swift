import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The CA's two files in its folder: `ca.pem` (the certificate, 0644) and `ca-key.pem` (the key,
/// 0600, created with that mode and never widened). Each is written to a temporary file in the same
/// folder and renamed over the old one, so a reader sees the old file or the new one, never half.
struct CAFiles: Sendable {
    static let certificateName = "ca.pem"
    static let keyName = "ca-key.pem"

    let folder: URL

    var certificatePath: String { folder.appendingPathComponent(Self.certificateName).path }
    var keyPath: String { folder.appendingPathComponent(Self.keyName).path }

    /// Which of the two files exist.
    enum Presence { case none, both, one }

    var presence: Presence {
        switch (Self.exists(certificatePath), Self.exists(keyPath)) {
        case (true, true): .both
        case (false, false): .none
        default: .one
        }
    }

    /// The certificate's and the key's PEM text; the key only when its file is private to its owner.
    func read() throws(ProxyCAError) -> (certificate: String, key: String) {
        var info = stat()
        guard stat(keyPath, &info) == 0 else { throw .unreadable }
        let mode = UInt16(info.st_mode) & 0o777
        guard mode & 0o077 == 0 else { throw .keyFileTooOpen(mode: mode) }
        return (try Self.readText(certificatePath), try Self.readText(keyPath))
    }

    /// Makes the folder (0700, its parents as usual) when missing, then writes the key and the certificate.
    func store(certificate: String, key: String) throws(ProxyCAError) {
        try makeFolder()
        try Self.replace(keyPath, with: Array(key.utf8), mode: 0o600, exactly: false)
        try Self.replace(certificatePath, with: Array(certificate.utf8), mode: 0o644, exactly: true)
        let directory = open(folder.path, O_RDONLY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    private func makeFolder() throws(ProxyCAError) {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: folder.path, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else { throw .folderNotWritable }
            return
        }
        do {
            try FileManager.default.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
        } catch {
            throw .folderNotWritable
        }
        guard mkdir(folder.path, 0o700) == 0 || errno == EEXIST else { throw .folderNotWritable }
    }

    private static func exists(_ path: String) -> Bool {
        var info = stat()
        return lstat(path, &info) == 0
    }

    private static func readText(_ path: String) throws(ProxyCAError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw .unreadable }
        guard let text = String(data: data, encoding: .utf8) else { throw .corrupt }
        return text
    }

    /// Writes `bytes` to a new file made with `mode` beside `path` (then set to `mode` whatever the
    /// umask when `exactly`; else the umask may only narrow it), syncs it, and renames it over `path`.
    private static func replace(_ path: String, with bytes: [UInt8], mode: mode_t, exactly: Bool) throws(ProxyCAError) {
        let temporary = path + ".\(UInt64.random(in: 0...UInt64.max)).tmp"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode)
        guard descriptor >= 0 else { throw .folderNotWritable }
        var written = 0
        var failed = exactly && fchmod(descriptor, mode) != 0
        while !failed, written < bytes.count {
            let count = bytes[written...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            if count > 0 { written += count } else if count < 0 && errno != EINTR { failed = true }
        }
        failed = failed || fsync(descriptor) != 0
        failed = close(descriptor) != 0 || failed
        guard !failed, rename(temporary, path) == 0 else {
            unlink(temporary)
            throw .folderNotWritable
        }
    }
}
