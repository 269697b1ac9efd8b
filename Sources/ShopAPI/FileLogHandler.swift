import Foundation
import Logging

/// Why a log file could not be opened, in words (not a Cocoa error code).
public struct LogFileError: Error, CustomStringConvertible {
    public let path: String
    public let errno: Int32

    public var description: String {
        switch errno {
        case ENOENT: return "cannot open log file \(path): its directory does not exist"
        case EACCES, EPERM: return "cannot open log file \(path): permission denied"
        case ELOOP: return "cannot open log file \(path): it is a symbolic link"
        case EISDIR: return "cannot open log file \(path): it is a directory"
        default: return "cannot open log file \(path): \(String(cString: strerror(errno)))"
        }
    }
}

/// A swift-log handler that appends lines to a file (never the terminal, which belongs to the UI).
/// Messages must not carry secrets; the client logs method, path, status, time and request id only.
public struct FileLogHandler: LogHandler {
    final class Sink: @unchecked Sendable {
        // FileHandle writes are serialized by this lock; the class is only reached through it.
        private let lock = NSLock()
        private let handle: FileHandle

        /// Opens `path` for appending: created with mode 0600, an existing file narrowed to 0600,
        /// a symbolic link refused (O_NOFOLLOW).
        init(path: String) throws {
            let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw LogFileError(path: path, errno: errno) }
            guard fchmod(fd, 0o600) == 0 else {
                let code = errno
                close(fd)
                throw LogFileError(path: path, errno: code)
            }
            handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        }

        func write(_ line: String) {
            lock.lock()
            defer { lock.unlock() }
            handle.write(Data(line.utf8))
        }
    }

    private let sink: Sink
    private let label: String
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    /// A factory for `LoggingSystem`/`Logger(label:factory:)` writing to `path` (created 0600).
    public static func factory(path: String) throws -> @Sendable (String) -> any LogHandler {
        let sink = try Sink(path: path)
        return { label in FileLogHandler(sink: sink, label: label) }
    }

    init(sink: Sink, label: String) {
        self.sink = sink
        self.label = label
    }

    public func log(event: LogEvent) {
        let time = ISO8601.format(Date())
        var line = "\(time) \(event.level) \(label): \(event.message)"
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        if !merged.isEmpty {
            line += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        sink.write(line + "\n")
    }
}
