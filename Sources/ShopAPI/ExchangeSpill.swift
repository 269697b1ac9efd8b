import Foundation

/// The exchanges an `ExchangeLog` no longer keeps in memory, as HAR entries, one JSON line each, in a
/// 0600 file of the state folder: a HAR saved late in a long session (`R`, `e`, `--har`) still holds
/// the write that failed at its start. Bounded by `limit` bytes: past it, the file is written again
/// without its oldest reads (to three quarters of the limit); a write is never dropped. Owned by one
/// `ExchangeLog` (an actor), so it is used by one task at a time.
final class ExchangeSpill {
    /// One spilled exchange: its number in the session, whether it was a write, its HAR entry (the URL
    /// is the path, the base added when the HAR is made; a request to another host holds its own origin).
    struct Line: Codable {
        var id: Int
        var write: Bool
        var entry: HAR.Entry
    }

    let path: String
    let limit: Int
    private var fd: Int32 = -1
    private var size = 0
    /// Past this size the file is compacted: the limit, or more when the writes alone (never dropped)
    /// already fill most of it — so a compaction is never repeated on every append.
    private var threshold: Int
    /// Set when the file could not be opened or written: nothing more is spilled (the HAR says so).
    private(set) var failed = false
    /// Reads dropped by the bound, for the count a HAR reports.
    private(set) var droppedReads = 0

    init(path: String, limit: Int) {
        self.path = path
        self.limit = max(64 * 1024, limit)
        threshold = self.limit
    }

    deinit { if fd >= 0 { close(fd) } }

    func append(_ exchange: Exchange) {
        guard !failed, let line = Self.encode(Line(id: exchange.id, write: exchange.method != "GET", entry: HAR.entry(exchange, base: ""))) else { return }
        if fd < 0 {
            // Created new, never through a link; a file of the same name left by a crash is replaced.
            unlink(path)
            fd = open(path, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            guard fd >= 0 else { failed = true; return }
        }
        guard Self.writeAll(fd, line) else { failed = true; return }
        size += line.count
        if size > threshold { compact() }
    }

    /// Every spilled exchange, oldest first; a later line for the same number (its answer, after it
    /// was spilled while pending) takes the earlier one's place.
    func lines() -> [Line] {
        // Read through the descriptor held, never the path: the file is this session's whatever
        // happens to the name.
        guard fd >= 0 else { return [] }
        var data = Data(count: size)
        let read = data.withUnsafeMutableBytes { buffer -> Int in
            var offset = 0
            while offset < buffer.count {
                let n = pread(fd, buffer.baseAddress.map { $0 + offset }, buffer.count - offset, off_t(offset))
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { break }
                offset += n
            }
            return offset
        }
        data.count = read
        var byID: [Int: Line] = [:]
        let decoder = JSONDecoder()
        for raw in data.split(separator: UInt8(ascii: "\n")) {
            if let line = try? decoder.decode(Line.self, from: raw) { byID[line.id] = line }
        }
        return byID.values.sorted { $0.id < $1.id }
    }

    /// The file written again without its oldest reads, to three quarters of the limit; every write kept.
    private func compact() {
        let all = lines()
        var encoded = all.compactMap { line in Self.encode(line).map { (line.write, $0) } }
        var total = encoded.reduce(0) { $0 + $1.1.count }
        let target = limit / 4 * 3
        var index = 0
        var dropped: Set<Int> = []
        while total > target, index < encoded.count {
            if !encoded[index].0 {
                total -= encoded[index].1.count
                dropped.insert(index)
            }
            index += 1
        }
        droppedReads += dropped.count
        encoded = encoded.enumerated().filter { !dropped.contains($0.offset) }.map(\.element)
        let temporary = path + ".new"
        unlink(temporary)
        let next = open(temporary, O_RDWR | O_APPEND | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard next >= 0 else { failed = true; return }
        for (_, bytes) in encoded where !Self.writeAll(next, bytes) {
            close(next)
            unlink(temporary)
            failed = true
            return
        }
        guard rename(temporary, path) == 0 else { close(next); unlink(temporary); failed = true; return }
        close(fd)
        fd = next
        size = total
        threshold = max(limit, total + limit / 4)
    }

    /// Closes and removes the file (the session ended: what it held is in the HAR written at the end).
    func remove() {
        if fd >= 0 { close(fd) }
        fd = -1
        failed = true  // nothing spilled after the end
        unlink(path)
    }

    private static func encode(_ line: Line) -> [UInt8]? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(line) else { return nil }
        return Array(data) + [UInt8(ascii: "\n")]
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return false }
            offset += n
        }
        return true
    }
}

/// Everything a session's log holds for its HAR: the exchanges kept in memory and those spilled to
/// the state folder, and how many reads the spill's bound dropped.
public struct SessionExchanges: Sendable {
    public var kept: [Exchange]
    var spilled: [ExchangeSpill.Line]
    /// Reads the spill's size bound dropped (never a write).
    public var droppedReads: Int
    /// True when the spill file could not be written: older exchanges past the window are missing.
    public var spillFailed: Bool

    public init(kept: [Exchange]) {
        self.kept = kept
        spilled = []
        droppedReads = 0
        spillFailed = false
    }

    init(kept: [Exchange], spilled: [ExchangeSpill.Line], droppedReads: Int, spillFailed: Bool) {
        self.kept = kept
        self.spilled = spilled
        self.droppedReads = droppedReads
        self.spillFailed = spillFailed
    }

    /// How many exchanges the HAR holds.
    public var count: Int { kept.count + spilled.count }
    /// The numbers of the writes among them (what a test and a report cite).
    public var writeIDs: [Int] { (spilled.filter(\.write).map(\.id) + kept.filter { $0.method != "GET" }.map(\.id)).sorted() }
}

extension ExchangeSpill.Line: Sendable {}
