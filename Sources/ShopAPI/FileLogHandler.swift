import Foundation
import Logging

/// A swift-log handler that appends lines to a file (never the terminal, which belongs to the UI).
/// Messages must not carry secrets; the client logs method, path, status, time and request id only.
public struct FileLogHandler: LogHandler {
    final class Sink: @unchecked Sendable {
        // FileHandle writes are serialized by this lock; the class is only reached through it.
        private let lock = NSLock()
        private let handle: FileHandle

        init(path: String) throws {
            let fm = FileManager.default
            if !fm.fileExists(atPath: path) {
                guard fm.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                    throw CocoaError(.fileWriteNoPermission, userInfo: [NSFilePathErrorKey: path])
                }
            }
            handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            handle.seekToEndOfFile()
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
