import Foundation
import Logging

/// Whose data a cache entry is: a shop (base URL) and, for per-user data, a user.
public struct CacheKey: Sendable, Hashable, Codable {
    public var baseURL: String
    public var user: String?

    public init(baseURL: String, user: String?) {
        self.baseURL = baseURL
        self.user = user
    }

    enum CodingKeys: String, CodingKey {
        case baseURL = "base_url", user
    }

    /// A file-name-safe, stable name: a readable slug plus a 64-bit FNV-1a hash of the exact key.
    var fileStem: String {
        let raw = baseURL + "\u{0}" + (user ?? "")
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in raw.utf8 {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01B3
        }
        let slug = String(String((user ?? "shop").unicodeScalars.map { s -> Character in
            let c = Character(s)
            return (c.isASCII && (c.isLetter || c.isNumber)) || c == "-" || c == "_" ? c : "_"
        }).prefix(32))
        return "\(slug)-\(String(hash, radix: 16))"
    }
}

/// A value read back from the cache, with when it was fetched from the server.
public struct CacheEntry<Value: Sendable>: Sendable {
    public var value: Value
    public var fetchedAt: Date

    public init(value: Value, fetchedAt: Date) {
        self.value = value
        self.fetchedAt = fetchedAt
    }
}

/// Where the cache lives: `--cache-dir`, else `$XDG_CACHE_HOME/reiterate-shop`, else `~/.cache/reiterate-shop`.
public enum CacheLocation {
    public static func directory(explicit: String?, environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let explicit, !explicit.isEmpty { return explicit }
        return AppDirectory.path("XDG_CACHE_HOME", default: ".cache", environment: environment)
    }
}

/// The app's folder of one XDG kind: `$VARIABLE/reiterate-shop` when the variable holds an absolute
/// path (the spec says to ignore a relative one), else `~/<default>/reiterate-shop`.
public enum AppDirectory {
    public static func path(_ variable: String, default relative: String, environment: [String: String]) -> String {
        if let xdg = environment[variable], xdg.hasPrefix("/") { return xdg + "/reiterate-shop" }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return "\(home)/\(relative)/reiterate-shop"
    }
}

/// What a cache file holds (`balance`, `packs`, …): named by whoever stores it, which the cache does
/// not know; a type, so a typo is a compile error where the names are declared (`CacheKind.balance`).
public struct CacheKind: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
    public let name: String
    public init(_ name: String) { self.name = name }
    public init(stringLiteral name: String) { self.name = name }
    public var description: String { name }
}

/// The on-disk cache: one small JSON file per (kind, key), written atomically (temporary file in the
/// same directory, fsync, rename, fsync of the directory), directory 0700, files 0600, versioned.
/// A file that is empty, cut, garbage, of another format version or kind, or unreadable is ignored
/// (and logged) and replaced by the next successful write. It holds only what callers put in —
/// shop data, never tokens or request bodies.
public actor CacheStore {
    public static let formatVersion = 1

    public let directory: String
    private let logger: Logger
    private var checkedDirectory = false

    public init(directory: String, logger: Logger = Logger(label: "reiterate.cache") { _ in SwiftLogNoOpLogHandler() }) {
        self.directory = directory
        self.logger = logger
    }

    /// The file that holds `kind` for `key`.
    public nonisolated func path(kind: CacheKind, key: CacheKey) -> String {
        "\(directory)/\(kind.name)-\(key.fileStem).json"
    }

    struct Envelope<Value: Codable>: Codable {
        var format: Int
        var kind: String
        var key: CacheKey
        var fetchedAt: Double
        var value: Value

        enum CodingKeys: String, CodingKey {
            case format, kind, key, value
            case fetchedAt = "fetched_at"
        }
    }

    /// Only the version, read first so that another format is told apart from garbage.
    struct VersionProbe: Decodable { var format: Int }

    public func read<Value: Codable & Sendable>(_ type: Value.Type, kind: CacheKind, key: CacheKey) -> CacheEntry<Value>? {
        readNow(type, kind: kind, key: key)
    }

    /// `read` without a hop to the actor: for a front end's first frame, before anything else runs
    /// (reading touches no state of the actor; writes stay on it).
    public nonisolated func readNow<Value: Codable & Sendable>(_ type: Value.Type, kind: CacheKind, key: CacheKey) -> CacheEntry<Value>? {
        let file = path(kind: kind, key: key)
        guard let data = FileManager.default.contents(atPath: file) else {
            if FileManager.default.fileExists(atPath: file) { logger.warning("cache: cannot read \(file); ignored") }
            return nil
        }
        guard !data.isEmpty else {
            logger.warning("cache: \(file) is empty; ignored")
            return nil
        }
        // One decoding when the entry is good (the first frame reads three); the probe only to say
        // what is wrong with one that is not.
        let decoder = JSONDecoder()
        guard let envelope = try? decoder.decode(Envelope<Value>.self, from: data), envelope.format == Self.formatVersion else {
            if let probe = try? decoder.decode(VersionProbe.self, from: data) {
                if probe.format != Self.formatVersion {
                    logger.warning("cache: \(file) has format \(probe.format), this build reads \(Self.formatVersion); ignored")
                } else {
                    logger.warning("cache: \(file) does not hold a readable \(kind); ignored")
                }
            } else {
                logger.warning("cache: \(file) is not a cache file (cut or garbage); ignored")
            }
            return nil
        }
        guard envelope.kind == kind.name, envelope.key == key, envelope.fetchedAt.isFinite else {
            logger.warning("cache: \(file) holds another entry; ignored")
            return nil
        }
        return CacheEntry(value: envelope.value, fetchedAt: Date(timeIntervalSince1970: envelope.fetchedAt))
    }

    /// Writes atomically; a failure is logged and reported, never fatal (the app works without a cache).
    @discardableResult
    public func write<Value: Codable & Sendable>(_ value: Value, kind: CacheKind, key: CacheKey, fetchedAt: Date) -> Bool {
        do {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            let data = try encoder.encode(Envelope(format: Self.formatVersion, kind: kind.name, key: key, fetchedAt: fetchedAt.timeIntervalSince1970, value: value))
            if !checkedDirectory {
                checkedDirectory = true
                if try !AtomicFile.ensureDirectory(directory), let mode = (try? FileManager.default.attributesOfItem(atPath: directory))?[.posixPermissions] as? Int,
                   mode & 0o077 != 0
                {
                    logger.warning("cache: \(directory) is readable by others (mode \(String(mode, radix: 8))); entries are 0600")
                }
                AtomicFile.removeLeftovers(in: directory)
            }
            try AtomicFile.write(data, to: path(kind: kind, key: key), directory: directory)
            return true
        } catch {
            logger.warning("cache: cannot write \(kind): \(error)")
            return false
        }
    }
}

public struct CacheWriteError: Error, CustomStringConvertible {
    public let description: String
}

/// Crash-safe replacement of a whole file.
public enum AtomicFile {
    /// Creates `directory` (and parents) with mode 0700 if it does not exist. An existing directory is
    /// left as it is (it may be shared, e.g. `--cache-dir /tmp`); answers whether it was created.
    @discardableResult
    public static func ensureDirectory(_ directory: String) throws -> Bool {
        var isDir: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDir) {
            guard isDir.boolValue else { throw CacheWriteError(description: "\(directory) is not a directory") }
            return false
        }
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard chmod(directory, 0o700) == 0 else {  // the umask may have narrowed nothing, or more
            throw CacheWriteError(description: "cannot set mode 0700 on \(directory): \(String(cString: strerror(errno)))")
        }
        return true
    }

    static let temporaryPrefix = ".reiterate-cache-"

    /// Removes temporary files that writers killed mid-write left behind (older than `age`).
    public static func removeLeftovers(in directory: String, olderThan age: TimeInterval = 600, now: Date = Date()) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(temporaryPrefix) && name.hasSuffix(".tmp") {
            let path = directory + "/" + name
            if let modified = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
               now.timeIntervalSince(modified) > age
            {
                unlink(path)
            }
        }
    }

    /// Writes `data` to a temporary file beside `path` (mode 0600), fsyncs it, renames it over `path`
    /// and fsyncs the directory: a reader (or a crash at any instant) sees the old file or the new one.
    public static func write(_ data: Data, to path: String, directory: String) throws {
        try ensureDirectory(directory)
        let temporary = "\(directory)/\(temporaryPrefix)\(UUID().uuidString).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw CacheWriteError(description: "cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var ok = false
        defer {
            if !ok { unlink(temporary) }
        }
        let written = data.withUnsafeBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let n = Foundation.write(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                offset += n
            }
            return true
        }
        let synced = written && fsync(fd) == 0
        close(fd)
        guard synced else { throw CacheWriteError(description: "cannot write \(temporary): \(String(cString: strerror(errno)))") }
        guard rename(temporary, path) == 0 else {
            throw CacheWriteError(description: "cannot replace \(path): \(String(cString: strerror(errno)))")
        }
        ok = true
        let dirFD = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if dirFD >= 0 {
            fsync(dirFD)
            close(dirFD)
        }
    }
}
